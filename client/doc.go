// Package client is the Go client of `remstore serve`: every API call with
// typed results, errors that carry the API's error body and request id, a
// context on every call, and the Python client's retry and resend policy.
//
//	c, _ := client.New("http://127.0.0.1:8088", client.Options{APIKey: key, UserID: "alice"})
//	res, _ := c.Store(ctx, "chat-1", []models.HistoryMessage{{Role: models.RoleUser, Content: "hi"}}, client.StoreOptions{})
//	history, _ := c.Load(ctx, "chat-1", client.LoadOptions{})
//	full, _ := c.Lookup(ctx, res.Keys[0])
//
// A 503 or a broken connection is retried up to MaxRetries times with
// jittered exponential backoff (or the server's Retry-After), a call that would
// act twice (pop, fork, cancel, delete, clear, update) only when it surely never reached the
// server; a store carries an Idempotency-Key so that a resend stores once. The
// policy is one table, fixtures/client/retry_policy.json, that this package's
// tests and the Python client's both read. [Client.Agent] is the sdk.Store the
// model SDK adapters (sdk/...) keep a session in.
package client
