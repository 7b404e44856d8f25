"""One session, two languages (issue 39): a pydantic-ai agent (Python,
through the Python client) runs three turns with tool calls; a Go agent on
openai-go (examples/openai-chat, through the Go client) loads the same
session and runs two more; pydantic-ai runs a sixth. Both call the same
scripted Chat Completions server. Each side's model sees the whole
conversation, calls paired with their results, each tool result in the same
words whichever side sends it (pydantic-ai's tool returns text holding JSON,
which remstore keeps as a JSON string);
a long answer of each side is cut on load and its key resolves from both
sides; the peer's own code loads the session (check: its load equals
remstore's, key for key, and its lookup returns the cut text)."""
import json
import os
import re
import subprocess

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from jsonserver import JSONServer
from peerlib import remstore
from remstore_serve import Server
from test_agent_writers import check

PROMPTS = ["What is the weather in Lisbon?", "Tell me everything about Lisbon.", "And in Porto?",
           "What is the weather in Faro?", "Tell me everything about Faro.", "Summarize the trip."]
LONG = {city: "".join(f"{city} fact {i}: trams, tiles and the sea. " for i in range(30)) for city in ("Lisbon", "Faro")}


def reply(prompt: str, n: int):
    """The scripted model of both sides: a weather prompt calls get_weather,
    an 'everything' prompt gets a long answer, anything else a short one."""
    m = re.search(r"weather in (\w+)", prompt)
    if m:
        return None, ("get_weather", {"city": m.group(1)})
    m = re.search(r"everything about (\w+)", prompt)
    if m:
        return LONG[m.group(1)], None
    return f"Answer {n}.", None


def fake_openai(prefix):
    """Chat Completions from reply(), recording each request; call ids start with prefix."""
    def answer(path, body):
        last, n = body["messages"][-1], len(server.requests)
        if last["role"] == "tool":
            msg = {"role": "assistant", "content": f"It is 21 degrees ({n})."}
        else:
            text, call = reply(last["content"], n)
            msg = {"role": "assistant", "content": text}
            if call:
                msg["tool_calls"] = [{"id": f"{prefix}_{n}", "type": "function",
                                      "function": {"name": call[0], "arguments": json.dumps(call[1])}}]
        return {"id": f"c{n}", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    server = JSONServer(answer)
    return server


def go_agent(srv, session, prompts, model_url):
    b = os.environ.get("REMSTORE_EXAMPLE_OPENAI_BIN")
    if not b:
        pytest.fail("REMSTORE_EXAMPLE_OPENAI_BIN is not set: run the suite with scripts/interop.sh (make test)")
    env = {**os.environ, "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "test"}
    p = subprocess.run([b, "-serve", srv.url, "-api-key", srv.key, "-user", "alice", "-session", session, *prompts],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def pairs_ok(messages):
    """Every pydantic-ai tool call is answered by the next request, ids equal."""
    for i, m in enumerate(messages):
        calls = [p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)]
        if calls:
            rets = [p.tool_call_id for p in messages[i + 1].parts if isinstance(p, ToolReturnPart)]
            assert rets == calls, (calls, rets)


def test_one_session_two_languages(database):
    db, url = database
    from remstore.pydantic_ai import run_turn_sync  # the client, installed in this venv by scripts/interop.sh

    seen, py_sent = [], []

    def model(messages, info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        # The tool messages pydantic-ai's OpenAIChatModel sends for these
        # messages: one per return, its content part.model_response_str()
        # (pydantic_ai/models/openai.py).
        py_sent.append([{"role": "tool", "tool_call_id": p.tool_call_id, "content": p.model_response_str()}
                        for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)])
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(content="It is 21 degrees.")])
        text, call = reply(last.content, len(seen))
        if call:
            return ModelResponse(parts=[ToolCallPart(call[0], call[1], tool_call_id=f"py_call_{len(seen)}")])
        return ModelResponse(parts=[TextPart(content=text)])

    agent = Agent(FunctionModel(model), system_prompt="You are a travel agent.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return json.dumps({"city": city, "celsius": 21})  # text holding JSON: stored as a JSON string

    session = f"trip-{os.getpid()}-{db}"
    srv = Server(url)
    fake = fake_openai("go_call")
    try:
        with srv.client("alice") as client:
            for prompt in PROMPTS[:3]:
                run_turn_sync(agent, client, session, prompt)
            go_agent(srv, session, PROMPTS[3:5], fake.url + "/v1")
            seen.clear()
            result = run_turn_sync(agent, client, session, PROMPTS[5])
            assert result.output == "Answer 1."
            hist = client.load(session, extras=True)
    finally:
        srv.stop()
        fake.close()

    # Every request of either side sends each tool result in the same words:
    # pydantic-ai's text as it returned it, the Go tool's as it returned it.
    words = {}
    requests = [("go", body["messages"]) for body in fake.bodies()] + [("python", msgs) for msgs in py_sent]
    for side, msgs in requests:
        for m in msgs:
            if m["role"] == "tool":
                words.setdefault(m["tool_call_id"], {}).setdefault(m["content"], set()).add(side)
    assert {i for i in words if i.startswith("py_call_")} and {i for i in words if i.startswith("go_call_")}, words
    for call_id, texts in words.items():
        assert len(texts) == 1, f"{call_id} reached the models in {len(texts)} forms: {texts}"
        assert set().union(*texts.values()) == {"go", "python"}, f"{call_id} was sent by one side only: {texts}"
    assert {t for i, ts in words.items() if i.startswith("py_call_") for t in ts} == {'{"city": "Lisbon", "celsius": 21}'}

    # The Go side's model saw the three pydantic-ai turns in OpenAI's form.
    first = fake.bodies()[0]["messages"]
    assert first[0] == {"role": "system", "content": "You are a travel agent. Use get_weather for weather."}
    assert [m["content"] for m in first if m["role"] == "user"] == PROMPTS[:4]
    for i, m in enumerate(first):
        for k, c in enumerate(m.get("tool_calls") or []):
            res = first[i + 1 + k]
            assert res["role"] == "tool" and res["tool_call_id"] == c["id"]
            assert res["content"] == '{"city": "Lisbon", "celsius": 21}'  # the text pydantic-ai's tool returned
            assert c["id"].startswith("py_call_") and json.loads(c["function"]["arguments"]) == {"city": "Lisbon"}
    assert any("REM LOOKUP" in (m.get("content") or "") for m in first if m["role"] == "assistant"), "pydantic-ai's long answer, cut"

    # pydantic-ai's sixth turn saw the Go turns in pydantic-ai's form.
    msgs = seen[0]
    prompts = [p.content for m in msgs if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]
    assert prompts == PROMPTS
    go_calls = [p for m in msgs if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart) and p.tool_call_id.startswith("go_call_")]
    assert [(c.tool_name, c.args) for c in go_calls] == [("get_weather", {"city": "Faro"})]
    pairs_ok(msgs)
    texts = [p.content for m in msgs if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, TextPart)]
    assert any(t.startswith("Faro fact 0") and "REM LOOKUP" in t for t in texts), "the Go side's long answer, cut"

    # Keys resolve from both sides, and the peer's own code reads the session.
    cut = [m for m in hist if m.get("_compressed")]
    assert {m["content"][:6] for m in cut} == {"Lisbon", "Faro f"}
    sid = re.search(r"session-([0-9a-f-]{36})-msg", cut[0]["_entity_key"]).group(1)
    for m in cut:
        full = remstore(["lookup", "--db", url, "--user-id", "alice", m["_entity_key"]]).stdout.decode().rstrip("\n")
        assert full in LONG.values()
    full, cut_seen = check(db, "two languages", url, sid)
    assert cut_seen >= 2
    roles = [m["role"] for m in full]
    assert roles.count("tool") == 2 and roles.count("user") == 6  # Lisbon (pydantic-ai) and Faro (Go)
