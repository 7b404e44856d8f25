// Package audit appends what an agent call saw to a YAML file per session when
// DEBUG_AUDIT_SESSION is set, in the format the Python service writes, so
// either side can append to and read the other's files.
//
//	if cfg.AuditEnabled { // settings: DEBUG_AUDIT_SESSION
//		sid, err := store.ResolveID(ctx, "chat-1") // the session's UUID
//		if err == nil {
//			audit.RecordIn(ctx, cfg.AuditDir, sid.String(), "planner", prompt, rawHistory, len(pydanticMessages))
//		}
//	}
//
// RecordIn never fails the caller. Files live in DEBUG_AUDIT_DIR (default
// settings.DefaultAuditDir, private to the user, not the shared temp dir), are
// named by the session's UUID, "{uuid}.yaml", never by a name as a caller
// spelled it (names are per tenant: two tenants' "plan" are two sessions and
// two files), hold at most [MaxFileBytes], and are never followed through a
// symlink (see [Append]). [FileName] keeps any other id inside the directory.
package audit
