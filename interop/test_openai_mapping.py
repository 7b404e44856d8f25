"""Replay Go-produced histories through pydantic-ai's OpenAI chat mapping,
offline: the OpenAI client talks to an httpx MockTransport that records the
request body and answers with a canned completion. No network is used."""
import json

import pytest

try:  # openai 3.x (pydantic-ai 2.x) uses httpx2, openai 1.x/2.x httpx
    import httpx2 as httpx
except ImportError:
    import httpx
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from conftest import HISTORIES, SYSTEM_PROMPT, run

COMPLETION = {
    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_openai_chat_mapping(path):
    history = ModelMessagesTypeAdapter.validate_json(
        run(["convert", "--system-prompt", SYSTEM_PROMPT], stdin=path.read_bytes()).stdout)
    bodies = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=COMPLETION)

    client = AsyncOpenAI(api_key="test-key", base_url="http://openai.invalid/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    agent = Agent(OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client)))
    assert agent.run_sync("next question", message_history=history).output == "ok"

    msgs = bodies[0]["messages"]
    assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert msgs[-1]["role"] == "user"
    # every assistant tool call is answered, in order, by tool messages with its id
    for i, m in enumerate(msgs):
        calls = m.get("tool_calls") or []
        if calls:
            answers = [x["tool_call_id"] for x in msgs[i + 1:i + 1 + len(calls)]]
            assert answers == [c["id"] for c in calls]
            for c in calls:
                assert isinstance(json.loads(c["function"]["arguments"]), dict)
    assert not any(m["role"] == "tool" and m["tool_call_id"] not in
                   {c["id"] for x in msgs for c in (x.get("tool_calls") or [])} for m in msgs)
