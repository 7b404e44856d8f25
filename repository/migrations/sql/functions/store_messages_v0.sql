-- Migration 3's store function (superseded by remstore_store_batch in 5). One
-- statement, so one round trip and one (implicit) transaction. Inside a
-- PL/pgSQL function each statement takes a new snapshot, so the position is
-- read after the session's advisory lock is held. It returns the session's
-- status and the first index written; when the session is not active it
-- writes nothing.
CREATE OR REPLACE FUNCTION remstore_store_messages(
	p_session uuid, p_lock bigint, p_name text, p_user text, p_tenant text, p_now timestamptz, p_rows jsonb)
RETURNS TABLE (status text, first_index bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
	v_status text;
	v_n bigint;
	v_last timestamptz;
	v_base timestamptz;
BEGIN
	PERFORM pg_advisory_xact_lock(p_lock);
	INSERT INTO sessions AS s (id, name, status, user_id, tenant_id, metadata, graph_edges, tags, created_at, updated_at)
	VALUES (p_session, p_name, 'active', p_user, p_tenant, '{}', '[]', '{}', p_now, p_now)
	ON CONFLICT (id) DO UPDATE SET updated_at = EXCLUDED.updated_at
	RETURNING s.status INTO v_status;
	IF v_status IS DISTINCT FROM 'active' THEN
		RETURN QUERY SELECT v_status, NULL::bigint;
		RETURN;
	END IF;
	SELECT count(*) FILTER (WHERE m.tenant_id = p_tenant), max(m.created_at) INTO v_n, v_last
	FROM messages m WHERE m.session_id = p_session;
	v_base := p_now;
	IF v_last IS NOT NULL AND v_base <= v_last THEN
		v_base := v_last + interval '1 microsecond';
	END IF;
	INSERT INTO messages (id, session_id, role, content, tool_calls, metadata, trace_id, span_id,
	                      user_id, tenant_id, created_at, updated_at)
	SELECT (r.v->>'id')::uuid, p_session, r.v->>'role', r.v->>'content', r.v->'tool_calls',
	       (r.v->'metadata') || jsonb_build_object('message_index', v_n + r.o - 1,
	                                               'entity_key', 'session-' || p_session || '-msg-' || (v_n + r.o - 1)),
	       r.v->>'trace_id', r.v->>'span_id', p_user, p_tenant,
	       v_base + (r.o - 1) * interval '1 microsecond', v_base + (r.o - 1) * interval '1 microsecond'
	FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS r(v, o);
	RETURN QUERY SELECT v_status, v_n;
END
$fn$;
