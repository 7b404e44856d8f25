// Package badinput drives the bad-input corpus (fixtures/bad) through the
// library, the CLI and the HTTP API: each input gets a clear error naming the
// field, or is accepted as documented in fixtures/bad/cases.json; nothing
// partial is written; nothing panics.
package badinput
