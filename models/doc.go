// Package models holds the data remstore moves around: the bun models of the
// peer's `sessions` and `messages` tables, the typed [Role], and the history
// message ([HistoryMessage]) whose JSON is exactly the dict the Python peer emits.
//
// It is data only: no database access and no formatting of model history.
// The JSON boundary lives here too ([DecodeHistory], [HistoryMessage.MarshalJSON])
// because key order, presence of keys and Python-style timestamps are part of
// the type's contract with the peer (SPEC §1).
package models
