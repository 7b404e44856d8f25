"""The README's Python snippet against a real `remstore serve`: the history
endpoint in pydantic-ai format goes straight into agent.run."""
import json
import os
import subprocess
import urllib.request

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import remstore_bin

KEY = "interop-key-0123456789"


def test_serve_history_into_agent_run(tmp_path):
    env = {**os.environ, "REMSTORE_DB": str(tmp_path / "http.db"), "REMSTORE_API_KEYS": KEY}
    proc = subprocess.Popen([remstore_bin(), "serve", "--addr", "127.0.0.1:0"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "listening on" not in line:
            line = proc.stderr.readline()
            assert line, "server exited"
        base = line.split("listening on ")[1].strip()
        headers = {"Authorization": f"Bearer {KEY}", "X-User-Id": "alice", "Content-Type": "application/json"}
        turn = [{"role": "user", "content": "Find flights"},
                {"role": "assistant", "content": "Searching."},
                {"role": "tool", "content": "{\"flights\": 3}", "tool_name": "search_flights", "tool_call_id": "call_1",
                 "tool_arguments": {"to": "LIS"}}]
        req = urllib.request.Request(f"{base}/v1/sessions/chat-1/messages", data=json.dumps(turn).encode(), headers=headers, method="POST")
        assert json.load(urllib.request.urlopen(req))["stored"] == 3

        # --- the README snippet ---
        url = f"{base}/v1/sessions/chat-1/messages?format=pydantic-ai&system_prompt=You%20are%20a%20travel%20agent."
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {KEY}", "X-User-Id": "alice"})
        history = ModelMessagesTypeAdapter.validate_json(urllib.request.urlopen(req).read())
        # ---

        seen = []

        def model(messages, info: AgentInfo) -> ModelResponse:
            seen.extend(messages)
            return ModelResponse(parts=[TextPart(content="Booked.")])

        agent = Agent(FunctionModel(model))
        assert agent.run_sync("Book the cheapest", message_history=history).output == "Booked."
        ret = [p for m in seen for p in m.parts if isinstance(p, ToolReturnPart)]
        assert ret[0].tool_call_id == "call_1" and ret[0].content == {"flights": 3}
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0
