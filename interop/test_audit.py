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


def test_run_turn_records_the_call_as_the_model_received_it(serve, tmp_path):
    """Issue 41: the record of a call is the call. A pydantic-ai agent run by
    run_turn_sync against serve with auditing on: the invocation the load
    recorded is completed with exactly what the FunctionModel received at its
    last request (messages, tools, settings), every message the run added,
    the model's name, the time and the usage; the peer's keys stay."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_core import to_jsonable_python

    from remstore.pydantic_ai import run_turn_sync

    seen = []

    def model(messages, info: AgentInfo):
        seen.append((list(messages), info))
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("weather", {"city": "Oslo"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("Cold, -3.")])

    agent = Agent(FunctionModel(model), instructions="Answer in one line.", model_settings={"temperature": 0.3, "max_tokens": 50})

    @agent.tool_plain
    def weather(city: str) -> str:
        """The weather in a city."""
        return "-3"

    s = serve(DEBUG_AUDIT_SESSION="1", DEBUG_AUDIT_DIR=str(tmp_path))
    client = s.client("alice")
    sid = "rec-" + uuid.uuid4().hex
    client.store(sid, [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "before"}])
    result = run_turn_sync(agent, client, sid, "Weather in Oslo?", system_prompt="You are a test.")
    # The dump is named by the session's UUID, not by its name.
    data = yaml.safe_load((tmp_path / f"{client.get_session(sid)['session']['id']}.yaml").read_text())
    (inv,) = data["invocations"]
    messages, info = seen[-1]
    assert inv["request"] == json.loads(ModelMessagesTypeAdapter.dump_json(messages))
    assert [t["name"] for t in inv["tools"]] == ["weather"]
    assert inv["tools"] == to_jsonable_python(info.function_tools)
    assert inv["model_settings"] == to_jsonable_python(info.model_settings)
    assert inv["model_settings"]["temperature"] == 0.3
    assert inv["answer"] == json.loads(result.new_messages_json())
    assert inv["model"] == result.all_messages()[-1].model_name
    assert inv["latency_ms"] > 0 and inv["usage"]["requests"] == 2
    assert inv["prompt"] == "Weather in Oslo?" and inv["system_prompt"] == "You are a test."
    assert inv["raw_history_count"] == 2 and len(inv["call_id"]) == 32
    for k in ["timestamp", "agent_name", "prompt", "raw_history_count", "pydantic_messages_count", "raw_session_history"]:
        assert k in inv
