"""remstore and the peer's own code on one database, both ways (issue 15).

Each case writes one session (the peer, remstore, or both in turn), then checks
for every tenant in it and every T of (200, 50, 7):

- loads: the peer's load_session_messages and `remstore load` give equal dicts,
  key for key (the one named difference: after the peer soft-deletes rows
  remstore wrote, remstore keeps each row's stored key while the peer
  renumbers; both keys resolve, see below);
- keys: every key either side prints resolves with `remstore lookup` to exactly
  the cut text, and to nothing for another tenant; the peer's retrieve_message
  finds every key remstore stored, with the same text, and nothing for another
  tenant;
- pydantic-ai: remstore's output always validates with ModelMessagesTypeAdapter;
  where the peer's does too, the two agree part for part except where SPEC §5
  says remstore differs (timestamps from the stored times; `model` read as
  assistant and `function` as tool, which the peer drops; arguments that are not
  an object, where the peer's output does not validate), and the one difference
  docs/interop.md names: a call stored on the answer whose tool row has no
  tool_arguments goes with its own arguments, where the peer sends the tool's
  result as arguments. Where the tool row has tool_arguments both send those,
  whatever the stored call says (SPEC §5).
"""
import json
import uuid

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from peerlib import (
    Message,
    MessageCompressor,
    Repository,
    SessionMessageStore,
    arun,
    count,
    remstore,
    session_to_pydantic_messages,
)

SYSTEM_PROMPT = "You are a test agent."
TS = (200, 50, 7)
INTRUDER = "mallory"


def long(unit: str, n: int = 450) -> str:
    out = ""
    while len(out) < n:
        out += unit
    return out


SHAPES = {
    "unicode": [
        {"role": "user", "content": "こんにちは、質問があります"},
        {"role": "assistant", "content": long("日本語の長い答えです。")},
        {"role": "user", "content": "and emoji?"},
        {"role": "assistant", "content": long("👩‍👩‍👧‍👦 family ", 500) + "é" * 3},
        {"role": "user", "content": "windows lines"},
        {"role": "assistant", "content": long("line one\r\nline two é\r\n", 520)},
        {"role": "assistant", "content": "short answer"},
    ],
    "tools": [
        {"role": "user", "content": "find things"},
        {"role": "assistant", "content": "calling tools"},
        {"role": "tool", "content": '{"hits": [1, 2, 3], "big": 123456789012345678901234567890}', "tool_call_id": "c1",
         "tool_name": "search", "tool_arguments": {"q": "ünïcödé 日本", "nested": {"a": [1, {"b": 2**70}]}}},
        {"role": "tool", "content": "[1, 2, 3]", "tool_call_id": "c2", "tool_name": "calc.v2", "tool_arguments": {"x": 1}},
        {"role": "tool", "content": "not json at all", "tool_call_id": "c4", "tool_name": "echo"},
        {"role": "tool", "content": "", "tool_name": "no id"},
        {"role": "assistant", "content": long("the summary of the tool results ")},
        {"role": "tool", "content": '{"orphan": true}', "tool_call_id": "c5", "tool_name": "late"},
    ],
    "roles": [
        {"role": "system", "content": long("you are a system prompt that is long ")},
        {"role": "user", "content": "q"},
        {"role": "model", "content": long("a model answer the peer leaves whole ")},
        {"role": "function", "content": '{"ok": true}', "tool_call_id": "f1", "tool_name": "fn"},
        {"role": "", "content": long("an answer with an empty role ")},
        {"role": "assistant", "content": long("a plain assistant answer ")},
        # A role of the peer's caller's own: loads unchanged; pydantic-ai has
        # no form for it, and remstore says so on stderr (SPEC §1).
        {"role": "critic", "content": "a role only the peer writes"},
    ],
    # Calls stored on the answer (the tool_calls column): the peer keeps the
    # list in its column; remstore's pydantic-ai history uses the stored
    # calls, which here say what the tool rows say (t2 has no arguments and
    # its result is not JSON, so the peer's {} agrees too).
    "typedcalls": [
        {"role": "user", "content": "weather and time?"},
        {"role": "assistant", "content": "checking both",
         "tool_calls": [{"id": "t1", "name": "weather", "arguments": "{\"city\": \"Lisbon\"}"},
                        {"id": "t2", "name": "clock", "arguments": "{}"}]},
        {"role": "tool", "content": '{"celsius": 21}', "tool_call_id": "t1", "tool_name": "weather",
         "tool_arguments": {"city": "Lisbon"}},
        {"role": "tool", "content": "10:30", "tool_call_id": "t2", "tool_name": "clock"},
        {"role": "assistant", "content": long("the weather and the time, at length ")},
    ],
    # A call stored on the answer whose tool row says otherwise in
    # tool_arguments: both send the tool row's arguments (SPEC §5), the
    # stored call's {"city": "Lisbon"} and {"tz": "UTC"} go nowhere.
    "callargs": [
        {"role": "user", "content": "weather in Lisbon?"},
        {"role": "assistant", "content": "let me check"},
        {"role": "user", "content": "and the time?"},
        {"role": "assistant", "content": "checking both",
         "tool_calls": [{"id": "w1", "name": "weather", "arguments": "{\"city\": \"Lisbon\"}"},
                        {"id": "k1", "type": "function", "function": {"name": "clock", "arguments": "{\"tz\": \"UTC\"}"}}]},
        {"role": "tool", "content": '{"celsius": 21}', "tool_call_id": "w1", "tool_name": "weather",
         "tool_arguments": {"city": "Porto"}},
        {"role": "tool", "content": "10:30", "tool_call_id": "k1", "tool_name": "clock",
         "tool_arguments": {"tz": "Europe/Lisbon"}},
        {"role": "assistant", "content": long("Porto is at 21 degrees at half past ten ")},
    ],
    # A call stored on the answer with no tool_arguments on its tool row (a
    # call without arguments: remstore, as the peer, stores no empty
    # tool_arguments): remstore sends the stored call's {}, the peer the
    # tool's result as arguments (STORED_ARGS, docs/interop.md).
    "storedargs": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "what time is it?"},
        {"role": "assistant", "content": "checking",
         "tool_calls": [{"id": "c1", "name": "clock", "arguments": "{}"}]},
        {"role": "tool", "content": '{"h": 10, "m": 30}', "tool_call_id": "c1", "tool_name": "clock"},
        {"role": "assistant", "content": "10:30"},
    ],
    "listargs": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": ""},
        {"role": "tool", "content": '{"r": 1}', "tool_call_id": "l1", "tool_name": "t", "tool_arguments": [1, 2]},
        {"role": "tool", "content": "[1, 2]", "tool_call_id": "l2", "tool_name": "t"},
        {"role": "tool", "content": "42", "tool_call_id": "l3", "tool_name": "calc"},
        {"role": "assistant", "content": long("after the list arguments ")},
    ],
}
# Shapes whose pydantic-ai output differs from the peer's by design (SPEC §5).
PYDANTIC_DIFFERS = {"roles": "model is read as assistant and function as tool; the peer drops both",
                    "listargs": "arguments that are not an object (a list, a number) become {}; the peer's output does not validate"}

# Shapes where remstore sends a stored call's own arguments and the peer,
# which knows no stored calls, the tool's result parsed (docs/interop.md):
# call id -> (remstore's args, the peer's); every other part agrees.
STORED_ARGS = {"storedargs": {"c1": ({}, {"h": 10, "m": 30})}}

DIRECTIONS = ["peer-writes", "remstore-writes", "alternate", "peer-deletes", "two-tenants"]


# --- writers ---------------------------------------------------------------

def peer_store(sid, tenant, msgs):
    arun(SessionMessageStore(user_id=tenant).store_session_messages(str(sid), [dict(m) for m in msgs]))


REMSTORE_ROLES = {"user", "assistant", "tool", "system", "function", "model"}


def remstore_refuses(m):
    """SPEC §1: the peer writes any role, remstore's writers only those of the
    table; and remstore refuses what a row would lose (the peer keeps tool
    fields on "tool" rows alone, so a "function" row's are refused)."""
    if m["role"] not in REMSTORE_ROLES:
        return True
    return m["role"] != "tool" and any(m.get(k) for k in ("tool_call_id", "tool_name", "tool_arguments"))


def rs_store(url, sid, tenant, msgs, ids=False):
    """remstore stores msgs; a row it refuses (remstore_refuses) is written by
    the peer in its place, so the case keeps its rows in order."""
    batch = []

    def flush():
        if batch:
            remstore(["store", "--db", url, "--user-id", tenant, "--session-id", str(sid)], json.dumps(batch).encode())
            batch.clear()

    for m in msgs:
        m = dict(m)
        if remstore_refuses(m):
            flush()
            peer_store(sid, tenant, [m])
            continue
        if ids:
            m["id"] = str(uuid.uuid4())
        batch.append(m)
    flush()


def peer_delete(sid, tenant, positions):
    """Soft-deletes the tenant's rows at these load positions, the peer's way."""
    rows = arun(SessionMessageStore(user_id=tenant)._message_repo.get_by_session(str(sid)))
    rows = [r for r in rows if r.tenant_id == tenant]
    repo = Repository(Message)
    for p in positions:
        assert arun(repo.delete(str(rows[p].id))), f"peer could not delete row {p}"


def write(direction, url, sid, msgs):
    """Writes the case; returns the tenants whose view is checked."""
    half = len(msgs) // 2
    if direction == "peer-writes":
        peer_store(sid, "alice", msgs[:half])
        peer_store(sid, "alice", msgs[half:])
    elif direction == "remstore-writes":
        rs_store(url, sid, "alice", msgs[:half])
        rs_store(url, sid, "alice", msgs[half:], ids=True)
    elif direction == "alternate":
        for i, m in enumerate(msgs):
            if i % 2 == 0:
                peer_store(sid, "alice", [m])
            else:
                rs_store(url, sid, "alice", [m], ids=(i % 4 == 1))
    elif direction == "peer-deletes":
        rs_store(url, sid, "alice", msgs)
        peer_delete(sid, "alice", [0, 2])
    elif direction == "two-tenants":
        rs_store(url, sid, "alice", msgs)
        # The peer lets another tenant write into alice's session; the
        # database's tenant guard (remstore migration 6) now refuses each of
        # its inserts (the peer logs the failure and goes on), and alice's
        # session keeps only her rows.
        peer_store(sid, "bob", msgs)
        from peerlib import peer_db
        assert arun(peer_db._db.fetchrow("SELECT count(*) AS n FROM messages WHERE session_id = $1 AND tenant_id = 'bob'",
                                         sid))["n"] == 0
        # Databases hold such rows from before the guard: written with it
        # off, both systems must still read them alike (and remstore shows
        # bob his own rows).
        guard = ["remstore_message_tenant_insert"]
        for g in guard:
            arun(peer_db._db.execute(f"ALTER TABLE messages DISABLE TRIGGER {g}"))
        try:
            peer_store(sid, "bob", msgs)
        finally:
            for g in guard:
                arun(peer_db._db.execute(f"ALTER TABLE messages ENABLE TRIGGER {g}"))
        p = remstore(["store", "--db", url, "--user-id", "bob", "--session-id", str(sid)],
                     json.dumps(msgs[:1]).encode(), check=False)
        assert p.returncode == 1 and b"not found" in p.stderr, p.stderr
        return ["alice", "bob"]
    return ["alice"]


# --- readers ---------------------------------------------------------------

def peer_load(sid, tenant, t, compress=True):
    store = SessionMessageStore(user_id=tenant, compressor=MessageCompressor(truncate_length=t))
    out = arun(store.load_session_messages(str(sid), compress_on_load=compress))
    return json.loads(json.dumps(out))  # the dicts as JSON sees them


def rs_load(url, sid, tenant, t, compress=True):
    args = ["load", "--db", url, "--user-id", tenant, "--session-id", str(sid), "--truncate-length", str(t)]
    if not compress:
        args.append("--no-compress")
    return json.loads(remstore(args).stdout)


def rs_lookup(url, tenant, key):
    p = remstore(["lookup", "--db", url, "--user-id", tenant, key], check=False)
    return p.stdout.decode() if p.returncode == 0 else None


def peer_retrieve(tenant, key):
    return arun(SessionMessageStore(user_id=tenant).retrieve_message(key))


def masked(msgs):
    """The dicts with REM LOOKUP keys replaced, for the one named difference."""
    out = []
    for m in msgs:
        m = dict(m)
        if "_entity_key" in m:
            m["content"] = m["content"].replace(m["_entity_key"], "<key>")
            m["_entity_key"] = "<key>"
        out.append(m)
    return out


def parts(dumped):
    """What must agree part for part: kinds, texts, tool names, ids, args, model names."""
    out = []
    for m in dumped:
        ps = [(p["part_kind"], p.get("content"), p.get("tool_name"), p.get("tool_call_id"), p.get("args")) for p in m["parts"]]
        out.append((m["kind"], m.get("model_name"), ps))
    return out


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_both_ways(database, direction, shape):
    db, url = database
    sid = uuid.uuid4()
    tenants = write(direction, url, sid, SHAPES[shape])
    for tenant in tenants:
        full_p, full_r = peer_load(sid, tenant, 200, compress=False), rs_load(url, sid, tenant, 200, compress=False)
        assert full_r == full_p, "uncompressed loads differ"
        assert len(full_r) == len(SHAPES[shape]) - (2 if direction == "peer-deletes" else 0)
        for t in TS:
            p, r = peer_load(sid, tenant, t), rs_load(url, sid, tenant, t)
            if direction == "peer-deletes":
                # Named difference: stored keys stay, the peer renumbers.
                assert masked(r) == masked(p), f"T={t}: loads differ beyond the keys"
            else:
                assert r == p, f"T={t}: loads differ"
            count(db, direction, shape, "load dicts equal")
            for i, (pm, rm) in enumerate(zip(p, r)):
                assert pm.get("_compressed") == rm.get("_compressed")
                if not rm.get("_compressed"):
                    continue
                cut = full_r[i]["content"]
                for side, m in (("peer", pm), ("remstore", rm)):
                    key = m.get("_entity_key")
                    assert key, f"{side} printed no key for message {i}"
                    want = cut
                    if side == "peer" and key != rm.get("_entity_key"):
                        # After the peer deletes rows remstore wrote, it
                        # renumbers: its key for a row that carries a stored
                        # key of its own is a position. A key is its message
                        # or nothing (SPEC §4, amended): remstore's lookup of
                        # it finds the row that stores that key, if any, and
                        # never a keyed row by its position.
                        holder = stored_holder(tenant, key)
                        want = holder
                        count(db, direction, shape, "peer keys shadowed by a stored key (SPEC §4 order)" if holder is not None
                              else "peer positional keys of keyed rows: nothing (SPEC §4, amended)")
                    assert rs_lookup(url, tenant, key) == want, f"remstore lookup of the {side}'s key {key}"
                    assert rs_lookup(url, INTRUDER, key) is None, f"{INTRUDER} read {key}"
                    assert peer_retrieve(INTRUDER, key) is None
                    count(db, direction, shape, f"{side} keys resolved by remstore")
                    got = peer_retrieve(tenant, key)
                    if side == "remstore" and remstore_wrote(direction, tenant, i, SHAPES[shape]):
                        assert got == cut, f"the peer's retrieve_message of remstore's stored key {key}: {got!r:.80}"
                        count(db, direction, shape, "remstore keys resolved by the peer")
                    elif got is not None and got == cut:
                        count(db, direction, shape, "peer keys resolved by the peer")
                    elif got is not None:
                        # The peer's own lookup finding another row: its bug, not ours.
                        count(db, direction, shape, "peer keys the peer resolves wrongly")
            check_pydantic(db, direction, shape, url, sid, tenant, t, p)


def stored_holder(tenant, key):
    """The content of the tenant's live assistant row that stores this key, if any."""
    from peerlib import peer_db
    row = arun(peer_db._db.fetchrow(
        "SELECT content FROM messages WHERE metadata->>'entity_key' = $1 AND tenant_id = $2"
        " AND deleted_at IS NULL AND role IN ('assistant', '')", key, tenant))
    return None if row is None else row["content"]


def remstore_wrote(direction, tenant, i, msgs):
    """Whether the tenant's i-th loaded row was written by remstore (so it has a stored key)."""
    if direction in ("peer-writes",) or tenant == "bob":
        return False
    kept = [m for j, m in enumerate(msgs) if j not in (0, 2)] if direction == "peer-deletes" else msgs
    if remstore_refuses(kept[i]):  # rs_store had the peer write it
        return False
    if direction == "alternate":
        return i % 2 == 1
    return True


def check_pydantic(db, direction, shape, url, sid, tenant, t, peer_history):
    p = remstore(["load", "--db", url, "--user-id", tenant, "--session-id", str(sid), "--truncate-length", str(t),
                  "--format", "pydantic-ai", "--system-prompt", SYSTEM_PROMPT])
    out = p.stdout
    unknown = sum(1 for m in peer_history if m["role"] not in REMSTORE_ROLES | {""})
    if unknown:
        assert f"{unknown} message{'s' if unknown > 1 else ''} left out of the pydantic-ai history" in p.stderr.decode(), p.stderr
        count(db, direction, shape, "unmapped rows reported on stderr")
    else:
        assert p.stderr == b"", p.stderr
    ours = ModelMessagesTypeAdapter.dump_python(ModelMessagesTypeAdapter.validate_json(out), mode="json")
    count(db, direction, shape, "remstore pydantic-ai valid")
    try:
        theirs = ModelMessagesTypeAdapter.dump_python(session_to_pydantic_messages(peer_history, SYSTEM_PROMPT), mode="json")
        ModelMessagesTypeAdapter.validate_python(theirs)
    except Exception:  # noqa: BLE001 - the peer's failure is what is counted
        assert shape in PYDANTIC_DIFFERS, f"the peer's pydantic-ai output failed on {shape}"
        count(db, direction, shape, "peer pydantic-ai invalid (ours valid)")
        return
    if shape in PYDANTIC_DIFFERS:
        assert parts(ours) != parts(theirs), f"{shape} was expected to differ: {PYDANTIC_DIFFERS[shape]}"
        count(db, direction, shape, "pydantic-ai differs as SPEC §5 says")
        return
    if direction == "peer-deletes":
        ours, theirs = masked_parts(ours), masked_parts(theirs)
    if shape in STORED_ARGS:
        for side, dumped in ((0, ours), (1, theirs)):
            for m in dumped:
                for p in m["parts"]:
                    if p["part_kind"] == "tool-call" and p["tool_call_id"] in STORED_ARGS[shape]:
                        assert p["args"] == STORED_ARGS[shape][p["tool_call_id"]][side], \
                            f"{('remstore', 'the peer')[side]} sent {p['tool_call_id']} with {p['args']}"
                        p["args"] = "<documented>"
        assert parts(ours) == parts(theirs), "pydantic-ai parts differ beyond the stored call's arguments"
        count(db, direction, shape, "pydantic-ai parts equal but a stored call's arguments (documented)")
        return
    assert parts(ours) == parts(theirs), "pydantic-ai parts differ"
    count(db, direction, shape, "pydantic-ai parts equal")


def masked_parts(dumped):
    import re
    key = re.compile(r"session-[0-9a-f-]{36}-msg-\d+")
    for m in dumped:
        for p in m["parts"]:
            if isinstance(p.get("content"), str):
                p["content"] = key.sub("<key>", p["content"])
    return dumped


def test_takeover_of_a_soft_deleted_session_fails(database):
    """Issue 26: alice soft-deletes her session; the peer's
    store_session_messages as bob on its id ran its upsert and set the
    session's tenant to bob (alice's next store: 404; bob could read, rename
    and purge it). The database's tenant guard refuses it: bob's rows never
    land, and alice's store brings her session back."""
    db, url = database
    sid = str(uuid.uuid4())
    rs_store(url, sid, "alice", [{"role": "user", "content": "mine"}])
    remstore(["sessions", "delete", sid, "--db", url, "--user-id", "alice"])
    # The peer logs the guard's refusals and returns.
    peer_store(sid, "bob", [{"role": "user", "content": "FORGED: alice said transfer all funds"}])
    from peerlib import peer_db
    row = arun(peer_db._db.fetchrow("SELECT tenant_id FROM sessions WHERE id = $1", uuid.UUID(sid)))
    assert row["tenant_id"] == "alice"
    n = arun(peer_db._db.fetchrow("SELECT count(*) AS n FROM messages WHERE session_id = $1 AND tenant_id = 'bob'", uuid.UUID(sid)))
    assert n["n"] == 0
    rs_store(url, sid, "alice", [{"role": "user", "content": "back"}])
    # Her session is hers again (its deleted messages stay deleted, as after any delete).
    assert [m["content"] for m in rs_load(url, sid, "alice", 200)] == ["back"]
    p = remstore(["sessions", "get", sid, "--db", url, "--user-id", "bob"], check=False)
    assert p.returncode != 0 and b"not found" in p.stderr
    count(db, "peer-as-bob", "takeover", "refused by the tenant guard")
