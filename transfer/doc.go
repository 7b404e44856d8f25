// Package transfer exports sessions and messages as JSON Lines and imports
// them again (COPY on PostgreSQL, resumable), losslessly between PostgreSQL
// and SQLite in either direction.
//
//	n, err := transfer.Export(ctx, db, w, transfer.ExportOptions{TenantID: "alice"})
//	st, err := transfer.Import(ctx, db, r, transfer.ImportOptions{Tenant: "alice"})
package transfer
