// Package remstore keeps an agent's conversation: Open a store on a SQLite
// file, ":memory:", a PostgreSQL URL or a remstore serve URL, then Append
// each turn, Load the history for the next model call and Lookup cut text.
//
//	store, err := remstore.Open(ctx, ":memory:", remstore.Options{UserID: "alice"})
//	_, err = store.Append(ctx, "trip-1", []remstore.Message{{Role: remstore.RoleUser, Content: "Hi"}})
//	h, err := store.Load(ctx, "trip-1") // h.Messages: long answers cut to a REM LOOKUP hint
//
// The embedded store and serve's Go client are the same Store, with the
// same options, results and errors, so moving from one to the other changes
// the string given to Open. A program that only talks to serve can import
// package client alone, which builds without SQLite or PostgreSQL drivers.
package remstore
