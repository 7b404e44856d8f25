"""The two new write paths of issue 25, read by the peer's own code:
`remstore store --format pydantic-ai` (pydantic-ai's own JSON, fixture
1-tools.json and a turn with a long answer) and the Agents SDK session
(remstore.agents.RemstoreSession over `remstore serve`, the items a real
Runner produced: fixtures/openai-agents/items.json).

For every T: the peer's load_session_messages equals `remstore load`, key for
key; every cut message's key resolves to the full text through both lookups;
the peer's session_to_pydantic_messages output validates with pydantic-ai (or,
where it does not, remstore's does)."""
import json
import uuid

from pydantic_ai.messages import ModelMessagesTypeAdapter

from peerlib import ROOT, arun, count, remstore, session_to_pydantic_messages
from remstore_serve import Server
from test_peer import SYSTEM_PROMPT, TS, peer_load, peer_retrieve, rs_load, rs_lookup

LONG_ANSWER = "".join(f"Sentence {i} of a long pydantic-ai answer, naïve café. " for i in range(20))
LONG_TURN = json.dumps([
    {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Tell me a lot",
                                   "timestamp": "2026-03-04T05:06:07Z"}]},
    {"kind": "response", "model_name": "gpt-x", "timestamp": "2026-03-04T05:06:08Z",
     "parts": [{"part_kind": "thinking", "content": "plan"}, {"part_kind": "text", "content": LONG_ANSWER}],
     "usage": {"input_tokens": 12, "output_tokens": 340}},
]).encode()


def check(db, what, url, sid, tenant="alice"):
    full = rs_load(url, sid, tenant, 200, compress=False)
    assert full == peer_load(sid, tenant, 200, compress=False), "uncompressed loads differ"
    cut_seen = 0
    for t in TS:
        p, r = peer_load(sid, tenant, t), rs_load(url, sid, tenant, t)
        assert r == p, f"T={t}: loads differ"
        count(db, "remstore-writes", what, "load dicts equal")
        for i, m in enumerate(r):
            if m.get("_compressed"):
                cut_seen += 1
                key = m["_entity_key"]
                assert rs_lookup(url, tenant, key) == full[i]["content"]
                assert peer_retrieve(tenant, key) == full[i]["content"], f"the peer's lookup of {key}"
                count(db, "remstore-writes", what, "keys resolved by both")
        theirs = None
        try:
            theirs = session_to_pydantic_messages(p, SYSTEM_PROMPT)
            ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(theirs, mode="json"))
            count(db, "remstore-writes", what, "peer pydantic-ai valid")
        except Exception:  # noqa: BLE001 - the peer's failure: ours must hold
            count(db, "remstore-writes", what, "peer pydantic-ai invalid (ours valid)")
        ModelMessagesTypeAdapter.validate_json(remstore(
            ["load", "--db", url, "--user-id", tenant, "--session-id", str(sid), "--truncate-length", str(t),
             "--format", "pydantic-ai", "--system-prompt", SYSTEM_PROMPT]).stdout)
    return full, cut_seen


def test_store_format_pydantic_ai(database):
    db, url = database
    sid = uuid.uuid4()
    tools = (ROOT / "fixtures" / "pydantic-ai" / "1-tools.json").read_bytes()
    for body in (tools, LONG_TURN):
        remstore(["store", "--db", url, "--user-id", "alice", "--session-id", str(sid), "--format", "pydantic-ai"], body)
    full, cut_seen = check(db, "pydantic-ai", url, sid)
    roles = [m["role"] for m in full]
    assert "tool" in roles and roles.count("assistant") >= 2
    assert full[-1]["content"] == LONG_ANSWER and cut_seen >= len(TS)
    tool = next(m for m in full if m["role"] == "tool")
    assert tool.get("tool_call_id") and tool.get("tool_name")


def test_agents_sdk_session(database):
    db, url = database
    from remstore.agents import RemstoreSession  # the client, installed in this venv by scripts/interop.sh

    items = json.loads((ROOT / "fixtures" / "openai-agents" / "items.json").read_text())
    srv = Server(url)
    try:
        async def write():
            async with srv.async_client("alice") as client:
                s = RemstoreSession(str(sid), client)
                # As the Runner saves them: each turn's items in one call.
                turn = []
                for it in items:
                    if it.get("role") == "user" and turn:
                        await s.add_items(turn)
                        turn = []
                    turn.append(it)
                await s.add_items(turn)
                return await RemstoreSession(str(sid), client, compress=False).get_items()

        sid = uuid.uuid4()
        back = arun(write())
    finally:
        srv.stop()
    assert back == items, "the session gives back the items it stored"
    full, _ = check(db, "agents-sdk", url, sid)
    assert len(full) == len(items)
    assert [m["role"] for m in full][:4] == ["user", "assistant", "tool", "assistant"]
    assert full[2]["tool_name"] == "add" and full[2]["tool_call_id"] == "call_1"
