// Package audit appends what an agent call saw to a YAML file per session when
// DEBUG_AUDIT_SESSION is set (SPEC §6), in the format the Python peer writes, so
// either side can append to and read the other's files.
//
//	if cfg.AuditEnabled { // settings: DEBUG_AUDIT_SESSION
//		audit.RecordIn(ctx, cfg.AuditDir, sessionID, "planner", prompt, rawHistory, len(pydanticMessages))
//	}
//
// RecordIn never fails the caller. Files live in DEBUG_AUDIT_DIR (default
// settings.DefaultAuditDir, private to the user, not the shared temp dir), are
// named by [FileName], which no session id can steer outside that directory,
// and are never followed through a symlink (see [Append]).
package audit
