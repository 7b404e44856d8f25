"""`remstore compress` agrees with the peer's MessageCompressor byte for byte."""
import json
import random
import uuid

import pytest

import peer_reference
from conftest import run

ALPHABET = ["a", "b", " ", "\n", "é", "日", "😀", "e\u0301", "ß", "\u200d", "Ω"]


def make_history(rng, t, n):
    out = []
    for i in range(n):
        length = rng.choice([2 * t - 1, 2 * t, 2 * t + 1, rng.randint(0, 5 * t)])
        msg = {"role": rng.choice(["user", "assistant", "assistant", "tool", "system"]),
               "content": "".join(rng.choice(ALPHABET) for _ in range(length)),
               "timestamp": f"2024-01-15T10:30:{i % 60:02d}+00:00"}
        if msg["role"] == "tool":
            msg["tool_call_id"] = f"call_{i}"
            msg["tool_name"] = "search"
            msg["tool_arguments"] = {"q": i, "nested": [1, {"x": None}]}
        if rng.random() < 0.2:
            msg["id"] = f"id-{i}"
            msg["extra_key"] = {"kept": True, "n": i}
        out.append(msg)
    return out


SESSIONS = ["550e8400-e29b-41d4-a716-446655440000", "chat-42", "x" * 300, "é" * 250]
# remstore maps a session key that is not a UUID per user, as its store does
# (README, "Session keys"): computed here independently with Python's uuid.
NAMESPACE = uuid.UUID("52201df2-8d00-59ec-8da2-59ec0060ce05")


def stored_id(user, key):
    try:
        return str(uuid.UUID(key))
    except ValueError:
        return str(uuid.uuid5(NAMESPACE, f"{user}\0{key}"))


@pytest.mark.parametrize("t", [1, 3, 50, 200])
@pytest.mark.parametrize("sid", SESSIONS, ids=["uuid", "short", "300chars", "unicode250"])
def test_compress_matches_peer(t, sid):
    rng = random.Random(hash((t, sid)) & 0xFFFF)
    history = make_history(rng, t, 120)
    got = json.loads(run(["compress", "--user-id", "alice", "--session-id", sid, "--truncate-length", str(t)],
                         stdin=json.dumps(history).encode()).stdout)
    want = peer_reference.compress_history(stored_id("alice", sid), history, t)
    assert got == want
    # the flags are the last keys, in the peer's order
    flags = ["_compressed", "_original_length", "_entity_key"]
    for g, w in zip(got, want):
        present = [k for k in w if k in flags]
        assert list(g)[len(g) - len(present):] == present


def test_compress_bad_input_exits_2():
    p = run(["compress", "--session-id", "s"], stdin=b"[{", check=False)
    assert p.returncode == 2 and p.stderr.count(b"\n") == 1
    p = run(["compress", "--session-id", "s", "--truncate-length", "0"], stdin=b"[]", check=False)
    assert p.returncode == 2
