// Package models holds the data remstore moves around: the bun models of the
// Python service's `sessions` and `messages` tables, the typed [Role], and the history
// message ([HistoryMessage]) whose JSON is exactly the dict the Python service emits.
//
// It is data only: no database access and no formatting of model history.
// The JSON boundary lives here too because key order, presence of keys and
// Python-style timestamps are part of the type's contract with the Python service,
// and Go puts a type's MarshalJSON beside the type. The rooms are
// files: the types (history.go, role.go, toolcall.go, columns.go, tables.go,
// timestamp.go), the codec (history_encode.go, history_decode.go and the
// value checks it shares with the writers, jsoncheck.go), and the errors it
// reports (errors.go, suggest.go). A rule about what a store keeps goes to
// sessionstore's validate.go, not here.
package models
