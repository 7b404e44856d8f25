// Package sessionstore is the session message store: the rules for storing,
// loading, looking up and managing agent conversations, written once over a
// small per-database seam (driver_pg.go, driver_sqlite.go).
//
// A [Store] is bound to one tenant (its user id). It writes messages in full,
// loads them back with long assistant answers cut to a REM LOOKUP hint, and
// resolves those keys to the full text. Rows are the Python Python service's, column for
// column, so both sides read and write the same session:
//
//	db, _ := repository.Open(ctx, "postgres://...")
//	_ = migrations.Up(ctx, db)
//	stores, _ := sessionstore.FromSettings(db, cfg) // or NewStores(db, Options{...})
//	st, _ := stores.For("alice")
//	res, _ := st.Store(ctx, "chat-1", msgs, sessionstore.StoreOptions{})
//	history, _ := st.Load(ctx, "chat-1", sessionstore.LoadOptions{})
//	full, _ := st.Lookup(ctx, res.Keys[1])
//
// [Store.InTx] runs the same store inside a caller's transaction. For a
// store with no setup at all, open SQLite's ":memory:".
package sessionstore
