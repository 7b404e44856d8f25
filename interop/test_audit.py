"""Audit dumps: Go's files load with yaml.safe_load into the peer's structure,
and Go appends to a file the peer (PyYAML) wrote."""
import json
import uuid

import yaml

import peer_reference
from conftest import run

TRICKY = ["yes", "no", "on", "2024-01-15", "2024-01-15T10:30:00+00:00", "null", "~", "0x1F", "1_000", ".inf",
          "12:30:45", "- item", "key: value", "#comment", "multi\nline\n", "tab\there", "é😀", "", "'quoted'"]


def store_and_load(tmp_path, sid, messages, agent="planner", prompt="next?"):
    env = {"REMSTORE_DB": str(tmp_path / "x.db"), "DEBUG_AUDIT_SESSION": "1", "DEBUG_AUDIT_DIR": str(tmp_path)}
    run(["store", "--session-id", sid], stdin=json.dumps(messages).encode(), env=env)
    out = run(["load", "--session-id", sid, "--format", "pydantic-ai", "--agent-name", agent, "--prompt", prompt], env=env).stdout
    dicts = json.loads(run(["load", "--session-id", sid], env={**env, "DEBUG_AUDIT_SESSION": ""}).stdout)
    return json.loads(out), dicts


def test_go_dump_loads_with_safe_load(tmp_path):
    sid = str(uuid.uuid4())
    messages = [{"role": "user", "content": s} for s in TRICKY] + [
        {"role": "assistant", "content": "x" * 450},
        {"role": "tool", "content": "{\"ok\": true}", "tool_call_id": "c1", "tool_name": "search",
         "tool_arguments": {"q": "yes", "n": 1, "deep": [None, True, 1.5, "2024-01-15"]}}]
    pyd, dicts = store_and_load(tmp_path, sid, messages, prompt="yes")
    data = yaml.safe_load((tmp_path / f"{sid}.yaml").read_text())
    assert data["session_id"] == sid
    (inv,) = data["invocations"]
    assert list(inv) == ["timestamp", "agent_name", "prompt", "raw_history_count", "pydantic_messages_count", "raw_session_history"]
    assert isinstance(inv["timestamp"], str) and inv["timestamp"].endswith("+00:00")
    assert inv["agent_name"] == "planner" and inv["prompt"] == "yes"
    assert inv["raw_history_count"] == len(messages) and inv["pydantic_messages_count"] == len(pyd)
    assert inv["raw_session_history"] == dicts  # every value, as load printed it
    assert inv["raw_session_history"][len(TRICKY)]["_compressed"] is True


def test_go_appends_to_peer_file(tmp_path):
    sid = str(uuid.uuid4())
    peer_history = [{"role": "user", "content": s, "timestamp": None} for s in TRICKY[:6]]
    peer_reference.audit_session_history(sid, "peer-agent", "from python", peer_history, 6, tmp_path)
    before = yaml.safe_load((tmp_path / f"{sid}.yaml").read_text())
    _, dicts = store_and_load(tmp_path, sid, [{"role": "user", "content": "from go"}], agent="go-agent")
    after = yaml.safe_load((tmp_path / f"{sid}.yaml").read_text())
    assert len(after["invocations"]) == 2
    assert after["invocations"][0] == before["invocations"][0]
    assert after["invocations"][1]["agent_name"] == "go-agent"
    assert after["invocations"][1]["raw_session_history"] == dicts
    # and the peer can append after Go
    peer_reference.audit_session_history(sid, "peer-agent", "again", [], 0, tmp_path)
    assert len(yaml.safe_load((tmp_path / f"{sid}.yaml").read_text())["invocations"]) == 3


def test_audit_show(tmp_path):
    sid = str(uuid.uuid4())
    store_and_load(tmp_path, sid, [{"role": "assistant", "content": "z" * 450}])
    shown = json.loads(run(["audit", "show", sid, "--dir", str(tmp_path), "--json"]).stdout)
    assert shown["session_id"] == sid and len(shown["invocations"]) == 1
    text = run(["audit", "show", sid, "--dir", str(tmp_path)]).stdout.decode()
    assert "REM LOOKUP session-" in text and "planner" in text
