"""Writes fixtures/pydantic-ai/<version>-<case>.json: message lists produced
by real pydantic-ai agents (FunctionModel, no network), the inputs of the Go
ingest tests (convert/ingest_test.go) and of interop/test_ingest.py.

    interop/.venv-1.42/bin/python interop/gen_pydantic_fixtures.py
    interop/.venv-2/bin/python interop/gen_pydantic_fixtures.py
"""
import importlib.metadata
import pathlib

from pydantic import BaseModel
from pydantic_ai import Agent, ImageUrl, ModelRetry
from pydantic_ai.messages import (ModelMessagesTypeAdapter, ModelResponse, RetryPromptPart, TextPart,
                                  ThinkingPart, ToolCallPart, ToolReturnPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel

OUT = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "pydantic-ai"
MAJOR = importlib.metadata.version("pydantic-ai-slim").split(".")[0]


def tools_run():
    """Two parallel tool calls (one with string args), a thinking part, a
    retried tool, and a final answer in two text parts, over two turns."""
    calls = {"n": 0}

    def model(messages, info: AgentInfo) -> ModelResponse:
        calls["n"] += 1
        last = messages[-1].parts
        if any(isinstance(p, RetryPromptPart) for p in last):
            return ModelResponse(parts=[ToolCallPart("flaky", {"attempt": 2}, tool_call_id="c3")])
        if any(isinstance(p, ToolReturnPart) and p.tool_name == "flaky" for p in last):
            return ModelResponse(parts=[TextPart("Paris is 20 °C, Rome <b>25</b> & dry."), TextPart("日本語も👨‍👩‍👧 ok")])
        if any(isinstance(p, ToolReturnPart) for p in last):
            return ModelResponse(parts=[ToolCallPart("flaky", {"attempt": 1}, tool_call_id="c2")])
        return ModelResponse(parts=[ThinkingPart("Two cities; call both.", signature="sig-1"),
                                    ToolCallPart("weather", {"city": "Paris"}, tool_call_id="c0"),
                                    ToolCallPart("weather", '{"city": "Rome"}', tool_call_id="c1")])

    agent = Agent(FunctionModel(model), system_prompt="You are a weather bot.")

    @agent.tool_plain
    def weather(city: str) -> dict:
        return {"city": city, "celsius": 20 if city == "Paris" else 25}

    @agent.tool_plain
    def flaky(attempt: int) -> str:
        if attempt < 2:
            raise ModelRetry("try again with attempt=2")
        return "ok on attempt 2"

    first = agent.run_sync("Weather in Paris and Rome?")
    second = agent.run_sync("Thanks!", message_history=first.all_messages())
    return second.all_messages()


def multimodal_and_output():
    """A user prompt with an image URL, and a structured output through the
    output tool."""
    class City(BaseModel):
        name: str

    def model(messages, info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"name": "Lisbon"}, tool_call_id="out1")])

    agent = Agent(FunctionModel(model), output_type=City)
    r = agent.run_sync(["Which city is this?", ImageUrl(url="https://example.com/lisbon.jpg")])
    return r.all_messages()


for name, msgs in {"tools": tools_run(), "multimodal": multimodal_and_output()}.items():
    path = OUT / f"{MAJOR}-{name}.json"
    path.write_bytes(ModelMessagesTypeAdapter.dump_json(msgs, indent=1) + b"\n")
    print("wrote", path)
