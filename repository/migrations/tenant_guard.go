package migrations

import "slices"

// The tenant guard (migration 6, PostgreSQL): rules the database enforces
// for every writer, the peer included, where remstore's own writes already
// keep them. A session's or a message's tenant never changes once set, and
// no row goes into a session under another tenant: before it, the peer's
// upsert could hand alice's soft-deleted session to bob, and the peer let
// bob write his messages into alice's live one. Rows and sessions without a
// tenant (NULL: the peer's older rows) are left alone. The error is a
// check violation (23514) that names neither tenant.
//
// Not on Citus: a trigger on a distributed table would query another
// shard's table from a worker, and the peer cannot write to distributed
// tables anyway (interop/peer/test_citus.py); Distribute drops the guard
// and migration 6 skips a distributed database.

// tenantGuardTriggers are the guard's triggers, by table.
var tenantGuardTriggers = [][2]string{
	{"sessions", "remstore_session_tenant"},
	{"messages", "remstore_message_tenant_update"},
	{"messages", "remstore_message_tenant_insert"},
}

// TenantGuardTriggers are the guard's triggers, by table: [table, trigger].
func TenantGuardTriggers() [][2]string { return slices.Clone(tenantGuardTriggers) }
