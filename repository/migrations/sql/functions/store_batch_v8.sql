-- The PostgreSQL write of a store call (migration 19; v7 was migration 15's,
-- v6 migration 13's, v5 migration 11's, v4 migration 10's, v3 migration 8's):
-- one statement, so one round trip and one (implicit) transaction, or part of
-- the caller's transaction. Inside a PL/pgSQL function each statement takes a
-- new snapshot, so the position is read after the session's advisory lock is
-- held. The Go writer of the other databases (sessionstore/driver_sqlite.go)
-- follows the same steps; the differential test (sessionstore/differential_test.go)
-- runs random scripts through both and compares every row.
--
-- Positions cost the same in a session of 20 rows and of a million: the
-- tenant's count of rows is kept (remstore_positions: n, and last_id, the
-- last row this function wrote). This function adds the rows it writes; the
-- rows other writers add (the Python service's: no metadata.entity_key) are
-- added by the database as they arrive (the trigger remstore_positions_foreign,
-- migration 13), whatever their created_at says: v5 counted only the rows
-- after its own last one, and another writer's row committed late with an
-- earlier created_at was never counted, so every later key drifted for good
-- (issue 42, H4). So the kept count is read and added to, never recomputed
-- from timestamps; without a usable count (the first write, or that last row
-- gone) the rows are counted once and the count is set. Under concurrent
-- writers a key can still collide with a row committed during this call (the
-- race of one call); the next call counts it. The session is counted before
-- it is written and after every writer that changes its count has let it go:
-- on PostgreSQL each takes the session's advisory lock (the peer's rows
-- through their trigger); on Citus, where a call delegated to the session's
-- worker takes that lock there and writers from the coordinator take theirs
-- on the coordinator, they meet at the session's row, locked first (v7 read
-- the count after its upsert, which locked the row).
--
-- Its statements run on generic plans (the SET below), prepared once per
-- connection: planning them again on every call (PostgreSQL's custom plans)
-- was a sixth of the server's time under load. Each is a probe of a primary
-- key or of the session's index whatever the session, which
-- TestStoreFunctionPlans checks on a table skewed like the benchmark's. The
-- two counts are the exception: EXECUTE plans them for their values each
-- time (they run on a first write and after the peer's rows), since a
-- generic count of a session may be a scan of the table.
--
-- It returns one row: status is the session's status, or 'not_found' when the
-- session belongs to another tenant, or 'id_taken' when a caller id is used by
-- a message of another session or tenant, or 'id_reused' when this session
-- holds a caller id with another role or text (a resend must carry what it
-- sent: nothing is written then); first_index is the index of the first
-- message written; existing lists the rows whose caller id this session
-- already holds ({o, key, mine, same}: a retry, not written again); keys are
-- the REM LOOKUP keys of the rows written, in order. A resend stored whole
-- already leaves the session as it is (a session deleted since stays so). p_rows is a JSON array of {id, role, content, tool_calls, metadata,
-- trace_id, span_id}; p_check says whether any id came from the caller;
-- p_allow_inactive lets lifecycle messages into a closed session.
--
-- A guarded store (p_expect not NULL) names the session's last live message
-- of the tenant as its caller loaded it: that message's id, or 'empty'. When
-- the session moved on since, nothing is written and status is 'moved'. A
-- resend of a call whose messages are all stored already is answered as a
-- retry first: its own first attempt moved the session. last is the
-- session's last live message of the tenant after the call ('empty': none):
-- what the next guarded store names.
--
-- The per-user limits (sessionstore.Limits; 0 is none): p_max_messages,
-- the messages a session may hold for the tenant, and p_max_sessions, the
-- sessions the tenant may own. They are checked in this call, before
-- anything is written, by the rule every other writer applies
-- (sessionstore/limits.go, whose statements TestLimitStatementsAreTheFunctions
-- finds here): a call adding messages to a session holding n of the tenant's
-- is refused when n plus those it adds (not those it resends) passes the
-- limit, and a call making a session when the tenant owns as many as it
-- may. status says which ('limit_messages', 'limit_sessions'), first_index
-- the count met. Calls into one session count one after the other under its
-- locks; calls making sessions under the tenant's lock, taken only to make
-- a session while a limit is set. Without a limit nothing more is read.
CREATE OR REPLACE FUNCTION remstore_store_batch(
	p_session uuid, p_lock bigint, p_name text, p_user text, p_tenant text, p_now timestamptz, p_rows jsonb,
	p_check boolean, p_allow_inactive boolean, p_expect text, p_max_messages integer DEFAULT 0, p_max_sessions integer DEFAULT 0)
RETURNS TABLE (status text, first_index bigint, existing jsonb, keys text[], last text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
	v_tenant text;
	v_status text;
	v_existing jsonb;
	v_n bigint;
	v_last timestamptz;
	v_base timestamptz;
	v_keys text[];
	v_lastid uuid;
	v_kept bigint;
	v_id uuid;
	v_now_last text;
	v_held bigint;
	-- remstore_caller_ids exists only on a distributed database.
	v_distributed boolean := to_regclass('remstore_caller_ids') IS NOT NULL;
BEGIN
	PERFORM pg_advisory_xact_lock(p_lock);
	-- Caller ids first: a refused call changes nothing, not even the session.
	IF p_check THEN
		-- On Citus messages' key is (session_id, id): no constraint spans
		-- sessions, so two calls storing one caller id into two sessions
		-- both passed the check below (issue 42). There each id has a row
		-- in remstore_caller_ids (distributed by id; the table exists only
		-- on a distributed database, migrations.CallerIDsTable), taken
		-- here as a lock: the second call waits until the first commits,
		-- and the check's next statement sees what it stored. Elsewhere
		-- messages' primary key (id) does this, and the table is absent.
		IF v_distributed THEN
			EXECUTE 'INSERT INTO remstore_caller_ids AS c (id)
				SELECT DISTINCT (r.v->>''id'')::uuid FROM jsonb_array_elements($1) AS r(v) ORDER BY 1
				ON CONFLICT (id) DO UPDATE SET id = c.id' USING p_rows;
		END IF;
		EXECUTE '/* planned per call */ SELECT jsonb_agg(jsonb_build_object(''o'', r.o, ''key'', m.metadata->>''entity_key'',
			''mine'', m.session_id = $2 AND m.tenant_id IS NOT DISTINCT FROM $3,
			''same'', m.role IS NOT DISTINCT FROM r.v->>''role'' AND m.content IS NOT DISTINCT FROM r.v->>''content'') ORDER BY r.o)
		FROM jsonb_array_elements($1) WITH ORDINALITY AS r(v, o)
		JOIN messages m ON m.id = (r.v->>''id'')::uuid'
		INTO v_existing USING p_rows, p_session, p_tenant;
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_existing) e WHERE NOT (e->>'mine')::boolean) THEN
			RETURN QUERY SELECT 'id_taken'::text, NULL::bigint, v_existing, NULL::text[], NULL::text;
			RETURN;
		END IF;
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_existing) e WHERE NOT (e->>'same')::boolean) THEN
			RETURN QUERY SELECT 'id_reused'::text, NULL::bigint, v_existing, NULL::text[], NULL::text;
			RETURN;
		END IF;
	END IF;
	-- A guarded call reads the tenant's last live message once, before
	-- anything is written: the guard compares it, a retry answers it.
	IF p_expect IS NOT NULL THEN
		SELECT COALESCE((SELECT m.id::text FROM messages m
			WHERE m.session_id = p_session AND m.tenant_id = p_tenant AND m.deleted_at IS NULL
			ORDER BY m.created_at DESC, m.id DESC LIMIT 1), 'empty') INTO v_now_last;
	END IF;
	-- A resend stored whole already: answered from what it stored, the
	-- session untouched, its guard not checked (its own first attempt moved
	-- the session).
	IF v_existing IS NOT NULL AND jsonb_array_length(v_existing) = jsonb_array_length(p_rows) THEN
		SELECT COALESCE(s.status, 'active') INTO v_status FROM sessions s WHERE s.id = p_session;
		RETURN QUERY SELECT v_status, NULL::bigint, v_existing, '{}'::text[], v_now_last;
		RETURN;
	END IF;
	IF v_now_last <> p_expect THEN -- the guard: the session moved on
		RETURN QUERY SELECT 'moved'::text, NULL::bigint, v_existing, NULL::text[], v_now_last;
		RETURN;
	END IF;
	-- The session's row, where a writer from the coordinator locks it (see
	-- above), and where a limit is set: a writer holding it has committed
	-- before the session is counted.
	IF v_distributed OR p_max_messages > 0 OR p_max_sessions > 0 THEN
		PERFORM 1 FROM sessions s WHERE s.id = p_session FOR UPDATE;
		IF NOT FOUND AND (p_max_messages > 0 OR p_max_sessions > 0) THEN
			-- A new session under a limit: the tenant's lock, so that calls
			-- making sessions of one tenant count them one after the other.
			-- On Citus an advisory lock holds only on the node that takes it
			-- (a delegated call runs on its session's worker): there the
			-- lock is the row named after the tenant in remstore_caller_ids,
			-- the table of lock tokens, distributed by id: in one place.
			IF v_distributed THEN
				EXECUTE 'INSERT INTO remstore_caller_ids AS c (id) VALUES (md5(''remstore tenant '' || $1)::uuid) ON CONFLICT (id) DO UPDATE SET id = c.id'
				USING p_tenant;
			ELSE
				PERFORM pg_advisory_xact_lock(1919251827, hashtext(p_tenant));
			END IF;
			PERFORM 1 FROM sessions s WHERE s.id = p_session FOR UPDATE; -- made while this call waited?
			IF NOT FOUND AND p_max_sessions > 0 THEN
				SELECT count(*) FROM sessions s WHERE s.tenant_id = p_tenant INTO v_held;
				IF v_held + 1 > p_max_sessions THEN
					RETURN QUERY SELECT 'limit_sessions'::text, v_held, v_existing, NULL::text[], NULL::text;
					RETURN;
				END IF;
			END IF;
		END IF;
	END IF;
	-- The kept count, and its last row by primary key: joined in one
	-- statement, a generic plan made before the table's first ANALYZE read
	-- the session's rows to find that one.
	SELECT c.n, c.last_id INTO v_kept, v_id
	FROM remstore_positions c WHERE c.session_id = p_session AND c.tenant_id = p_tenant;
	IF v_kept IS NOT NULL THEN
		PERFORM 1 FROM messages m WHERE m.id = v_id AND m.session_id = p_session AND m.tenant_id = p_tenant;
		IF NOT FOUND THEN
			v_kept := NULL;
		END IF;
	END IF;
	IF v_kept IS NULL THEN
		EXECUTE '/* planned per call */ SELECT count(*) FROM messages m WHERE m.session_id = $1 AND m.tenant_id = $2'
			INTO v_n USING p_session, p_tenant;
	ELSE
		v_n := v_kept;
	END IF;
	-- The messages limit counts what the call adds: not the rows whose
	-- caller id the session holds (a resend adds nothing, and is answered).
	v_held := jsonb_array_length(p_rows) - COALESCE(jsonb_array_length(v_existing), 0);
	IF p_max_messages > 0 AND v_held > 0 AND v_n + v_held > p_max_messages THEN
		RETURN QUERY SELECT 'limit_messages'::text, v_n, v_existing, NULL::text[], NULL::text;
		RETURN;
	END IF;
	-- The common path is this one statement: create the session, or touch
	-- (and undelete) it when it is the tenant's and open to this write.
	INSERT INTO sessions AS s (id, name, status, user_id, tenant_id, metadata, graph_edges, tags, created_at, updated_at)
	VALUES (p_session, p_name, 'active', p_user, p_tenant, '{}', '[]', '{}', p_now, p_now)
	ON CONFLICT (id) DO UPDATE SET updated_at = GREATEST(s.updated_at, EXCLUDED.updated_at), deleted_at = NULL
		WHERE s.tenant_id = EXCLUDED.tenant_id AND (COALESCE(s.status, 'active') = 'active' OR p_allow_inactive)
	RETURNING COALESCE(s.status, 'active') INTO v_status;
	IF NOT FOUND THEN -- why not: another tenant's session, or one not open to this write
		SELECT s.tenant_id, COALESCE(s.status, 'active') INTO v_tenant, v_status FROM sessions s WHERE s.id = p_session;
		IF v_tenant IS DISTINCT FROM p_tenant THEN
			v_status := 'not_found';
		END IF;
		RETURN QUERY SELECT v_status, NULL::bigint, NULL::jsonb, NULL::text[], NULL::text;
		RETURN;
	END IF;
	-- max(created_at), written so that every plan reads one index entry
	-- (before its first ANALYZE, a generic max() read the session's range).
	SELECT m.created_at INTO v_last FROM messages m
	WHERE m.session_id = p_session AND m.created_at IS NOT NULL ORDER BY m.created_at DESC LIMIT 1;
	v_base := p_now;
	IF v_last IS NOT NULL AND v_base <= v_last THEN
		v_base := v_last + interval '1 microsecond';
	END IF;
	WITH written AS (
		INSERT INTO messages (id, session_id, role, content, tool_calls, graph_edges, metadata, tags, trace_id, span_id,
		                      user_id, tenant_id, created_at, updated_at)
		SELECT (r.v->>'id')::uuid, p_session, r.v->>'role', r.v->>'content', r.v->'tool_calls', '[]',
		       (r.v->'metadata') || jsonb_build_object('message_index', v_n + r.k - 1,
		                                               'entity_key', 'session-' || p_session || '-msg-' || (v_n + r.k - 1)),
		       '{}', r.v->>'trace_id', r.v->>'span_id', p_user, p_tenant,
		       v_base + (r.k - 1) * interval '1 microsecond', v_base + (r.k - 1) * interval '1 microsecond'
		FROM (SELECT x.v, row_number() OVER (ORDER BY x.o) AS k
		      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(v, o)
		      WHERE v_existing IS NULL
		         OR NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v_existing) e WHERE (e->>'o')::bigint = x.o)) r
		RETURNING id, (metadata->>'message_index')::bigint AS i, metadata->>'entity_key' AS k)
	SELECT array_agg(w.k ORDER BY w.i), (array_agg(w.id ORDER BY w.i DESC))[1] INTO v_keys, v_lastid FROM written w;
	IF v_lastid IS NOT NULL THEN
		-- Added to, when the count was kept: rows another writer committed
		-- since it was read are in it (the trigger's), and stay counted.
		INSERT INTO remstore_positions AS c (session_id, tenant_id, n, last_id)
		VALUES (p_session, p_tenant, v_n + cardinality(v_keys), v_lastid)
		ON CONFLICT (session_id, tenant_id) DO UPDATE
		SET n = CASE WHEN v_kept IS NULL THEN EXCLUDED.n ELSE c.n + cardinality(v_keys) END, last_id = EXCLUDED.last_id;
	END IF;
	RETURN QUERY SELECT v_status, v_n, v_existing, COALESCE(v_keys, '{}'), v_lastid::text;
END
$fn$;
