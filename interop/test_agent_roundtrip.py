"""A pydantic-ai Agent kept across turns in `remstore serve` (PostgreSQL).

The same six turns run twice with a deterministic FunctionModel that calls
tools: once with in-memory history (message_history=result.all_messages()),
once loading each turn's history from remstore and storing new_messages().

- T large (nothing cut): the history remstore gives back at every turn is the
  previous turn's all_messages(), dumped field for field, timestamps and ids
  included; and what the model receives at every call is the same in both runs
  but for the run's own clock and run ids.
- T = 200: the essay answer comes back cut, first and last 200 code points
  with its REM LOOKUP hint; everything else is as above; on the recall turn the
  agent resolves the hint through remstore.pydantic_ai.lookup_tool and answers
  exactly what the in-memory run answers.
"""
import json
import re

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import unique
from remstore.pydantic_ai import lookup_tool

ESSAY = "".join(f"Paragraph {i}: the quick brown fox, déjà vu, 日本語 {i}. " for i in range(40))
PROMPTS = [
    "Find flights to Lisbon",
    "What is the weather in Lisbon and Porto?",
    "Write me an essay about travel",
    "Thanks. Book the cheapest flight",
    "Recall the essay's last words",
    "Summarize everything",
]
HINT = re.compile(r"REM LOOKUP (\S+) to recover")


def dump(msgs):
    return ModelMessagesTypeAdapter.dump_python(list(msgs), mode="json")


VOLATILE = {"timestamp", "run_id", "conversation_id"}


def stable(v):
    """A dump without what belongs to one run: its clock and its ids."""
    if isinstance(v, dict):
        return {k: stable(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [stable(x) for x in v]
    return v


def model_fn(seen):
    """A deterministic model: what it answers depends only on what it is sent."""
    def model(messages, info: AgentInfo) -> ModelResponse:
        seen.append(dump(messages))
        last = messages[-1].parts
        returns = [p for p in last if p.part_kind == "tool-return"]
        if returns:
            if returns[0].tool_name == "rem_lookup":
                return ModelResponse(parts=[TextPart(content="The essay ends: " + returns[0].content[-30:])])
            return ModelResponse(parts=[TextPart(content="Results: " + "; ".join(
                f"{r.tool_name}={json.dumps(r.content, sort_keys=True)}" for r in returns))])
        prompt = next(p.content for p in last if p.part_kind == "user-prompt")
        if "flights" in prompt.lower() and "book" not in prompt.lower():
            return ModelResponse(parts=[ToolCallPart("search_flights", {"to": "LIS"}, tool_call_id="call_f1")])
        if "weather" in prompt:
            return ModelResponse(parts=[
                TextPart(content="Checking both cities."),
                ToolCallPart("get_weather", {"city": "Lisbon"}, tool_call_id="call_w1"),
                ToolCallPart("get_weather", {"city": "Porto"}, tool_call_id="call_w2")])
        if "essay" in prompt and "Recall" not in prompt:
            return ModelResponse(parts=[TextPart(content=ESSAY)])
        if "Recall" in prompt:
            # Find the essay in the history: whole, or cut with a hint to resolve.
            for m in messages:
                for p in m.parts:
                    if p.part_kind == "text" and p.content.startswith("Paragraph 0"):
                        h = HINT.search(p.content)
                        if h:
                            return ModelResponse(parts=[ToolCallPart("rem_lookup", {"key": h.group(1)},
                                                                     tool_call_id="call_l1")])
                        return ModelResponse(parts=[TextPart(content="The essay ends: " + p.content[-30:])])
            return ModelResponse(parts=[TextPart(content="I saw no essay.")])
        asked = sum(p.part_kind == "user-prompt" for m in messages for p in m.parts)
        return ModelResponse(parts=[TextPart(content=f"Done: {asked} requests handled.")])
    return model


def make_agent(seen, client):
    agent = Agent(FunctionModel(model_fn(seen)), system_prompt="You are a travel agent.",
                  tools=[lookup_tool(client)])

    @agent.tool_plain
    def search_flights(to: str) -> dict:
        return {"to": to, "flights": [{"no": "TP1", "eur": 120}, {"no": "FR2", "eur": 45}]}

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return {"Lisbon": "sunny, 21 °C", "Porto": "rain, 15 °C"}[city]

    return agent


def in_memory(client):
    seen, outputs, history = [], [], []
    agent = make_agent(seen, client)
    for prompt in PROMPTS:
        r = agent.run_sync(prompt, message_history=history)
        history = r.all_messages()
        outputs.append(r.output)
    return seen, outputs


@pytest.mark.parametrize("t", [100_000, 200])
def test_agent_round_trip(serve, t):
    srv = serve(REMSTORE_TRUNCATE_LENGTH=t)
    sid = unique("agent")
    with srv.client(unique("u")) as client:
        mem_seen, mem_out = in_memory(client)
        seen, outputs, previous = [], [], []
        calls_per_turn = []
        agent = make_agent(seen, client)
        for prompt in PROMPTS:
            history = client.load_pydantic_ai(sid)
            if t > len(ESSAY):
                # Nothing cut: remstore gives back exactly what the last run had.
                assert dump(history) == dump(previous), f"history before {prompt!r} differs"
            before = len(seen)
            r = agent.run_sync(prompt, message_history=history)
            client.store_pydantic_ai(sid, r.new_messages())
            previous = r.all_messages()
            outputs.append(r.output)
            calls_per_turn.append(len(seen) - before)

    assert outputs == mem_out, "the agent answered differently"
    if t > len(ESSAY):
        assert len(seen) == len(mem_seen)
        for i, (a, b) in enumerate(zip(seen, mem_seen)):
            assert stable(a) == stable(b), f"model call {i}: the model was sent something else"
        return

    # T=200: the recall turn makes one call more (the lookup); otherwise what
    # the model saw differs only in the essay, cut by design.
    assert calls_per_turn[4] == 2 and len(seen) == len(mem_seen) + 1
    lookups = [p for m in seen[sum(calls_per_turn[:4]) + 1] for p in m["parts"]
               if p["part_kind"] == "tool-return" and p["tool_name"] == "rem_lookup"]
    assert lookups and lookups[0]["content"] == ESSAY, "the lookup tool gave the full essay back"
    mem_calls, at, cuts = iter(mem_seen), 0, 0
    for turn, n in enumerate(calls_per_turn):
        ours_calls = seen[at:at + n]
        at += n
        if turn == 4:
            ours_calls = ours_calls[:1]  # the lookup round trip the in-memory run does not need
        for k, ours in enumerate(ours_calls):
            theirs = next(mem_calls)
            # Our later history holds the lookup's call and return as well.
            flat_o = [p for m in stable(ours) for p in m["parts"] if p.get("tool_name") != "rem_lookup"]
            flat_t = [p for m in stable(theirs) for p in m["parts"]]
            assert len(flat_o) == len(flat_t), f"turn {turn} call {k}: {len(flat_o)} parts, in memory {len(flat_t)}"
            for po, pt in zip(flat_o, flat_t):
                if po != pt and pt.get("content") == ESSAY:
                    cut = po["content"]
                    key = HINT.search(cut).group(1)
                    # SPEC §4, by hand: first and last T code points around the hint.
                    assert cut == (ESSAY[:200] + f"\n\n... [Message truncated - REM LOOKUP {key} to recover full content]"
                                   " ...\n\n" + ESSAY[-200:])
                    cuts += 1
                    continue
                assert po == pt, f"turn {turn} call {k}: parts differ beyond the cut essay"
    assert cuts == 3, "the essay was seen cut in each of the three later turns"
