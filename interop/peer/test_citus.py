"""What the peer's own code can still do once remstore's tables are distributed on Citus (issue 16).

remstore distributes sessions by id and messages by session_id, and Citus makes
messages' primary key (session_id, id). The peer's reads go on working: its
load_session_messages gives the same dicts as `remstore load`, and its
retrieve_message finds remstore's keys. Its writes do not: it upserts messages
with ON CONFLICT (id), which no constraint matches any more, and its
store_session_messages logs the error as a warning and returns as if it had
stored: the message is lost. The warning is recorded in
.test-output/peer-citus.txt for docs/scale-out.md.
"""
import json
import os
import urllib.parse
import uuid

import pytest
from loguru import logger

from peerlib import REQUIRE, ROOT, SessionMessageStore, arun, peer_db, remstore
from test_peer import masked, peer_load, rs_load

CITUS_URL = os.environ.get("REMSTORE_TEST_CITUS_URL", "")


@pytest.fixture(scope="module")
def citus():
    if not CITUS_URL:
        if REQUIRE:
            pytest.fail("REMSTORE_TEST_CITUS_URL is not set under REMSTORE_REQUIRE_ALL=1", pytrace=False)
        pytest.skip("REMSTORE_TEST_CITUS_URL is not set (run make test)")
    schema = "peer_citus_" + uuid.uuid4().hex[:8]
    u = urllib.parse.urlsplit(CITUS_URL)
    q = urllib.parse.parse_qsl(u.query) + [("search_path", schema)]
    url = urllib.parse.urlunsplit((u.scheme, u.netloc, u.path, urllib.parse.urlencode(q), ""))
    import asyncpg

    async def admin(sql):
        c = await asyncpg.connect(CITUS_URL.replace("postgres://", "postgresql://", 1))
        try:
            await c.execute(sql)
        finally:
            await c.close()

    arun(admin(f"CREATE SCHEMA {schema}"))
    remstore(["migrate", "up", "--distributed", "--shard-count", "4", "--db", url])
    svc = peer_db.DatabaseService(url.replace("postgres://", "postgresql://", 1))
    arun(svc.connect())
    before = peer_db._db
    peer_db._db = svc
    yield url
    peer_db._db = before
    arun(svc.disconnect()) if hasattr(svc, "disconnect") else None
    arun(admin(f"DROP SCHEMA {schema} CASCADE"))


def test_peer_reads_distributed_tables(citus):
    status = json.loads(remstore(["citus", "status", "--json", "--db", citus]).stdout)
    assert status["distributed"], status
    tenant, sid = "alice", uuid.uuid4()
    msgs = [{"role": "user", "content": "plan the trip"},
            {"role": "assistant", "content": "Here is the plan. " * 40},
            {"role": "tool", "content": '{"ok": true}', "tool_call_id": "c1", "tool_name": "search"},
            {"role": "assistant", "content": "Done."}]
    remstore(["store", "--db", citus, "--user-id", tenant, "--session-id", str(sid)], json.dumps(msgs).encode())
    for t in (200, 50):
        ours, theirs = rs_load(citus, sid, tenant, t), peer_load(sid, tenant, t)
        assert masked(theirs) == masked(ours), f"T={t}"
        assert ours == theirs, f"T={t}: keys differ"
    key = rs_load(citus, sid, tenant, 50)[1]["_entity_key"]
    assert arun(SessionMessageStore(user_id=tenant).retrieve_message(key)) == msgs[1]["content"]
    assert arun(SessionMessageStore(user_id="mallory").retrieve_message(key)) is None


def test_peer_write_fails_on_distributed_tables(citus):
    sid = uuid.uuid4()
    warnings = []
    sink = logger.add(lambda m: warnings.append(str(m)), level="WARNING")
    try:
        arun(SessionMessageStore(user_id="bob").store_session_messages(str(sid), [{"role": "user", "content": "hi"}]))
    finally:
        logger.remove(sink)
    assert peer_load(sid, "bob", 200) == [], "the peer's upsert stored a message on a distributed table"
    text = "".join(warnings)
    assert "ON CONFLICT" in text, text
    out = ROOT / ".test-output"
    out.mkdir(exist_ok=True)
    (out / "peer-citus.txt").write_text(text)
    # remstore writes that session.
    remstore(["store", "--db", citus, "--user-id", "bob", "--session-id", str(sid)], b'[{"role": "user", "content": "hi"}]')
    assert [m["content"] for m in peer_load(sid, "bob", 200)] == ["hi"]
