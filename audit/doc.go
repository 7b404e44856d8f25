// Package audit appends what an agent call saw to a YAML file per session when
// DEBUG_AUDIT_SESSION is set (SPEC §6), in the format the Python peer writes, so
// either side can append to and read the other's files.
//
//	if cfg.AuditEnabled { // settings: DEBUG_AUDIT_SESSION
//		audit.RecordIn(cfg.AuditDir, sessionID, "planner", prompt, rawHistory, len(pydanticMessages))
//	}
//
// RecordIn never fails the caller. Files live in DEBUG_AUDIT_DIR (default: the
// system temp dir) and are named by [FileName], which no session id can steer
// outside that directory.
package audit
