"""Go's pydantic-ai output, loaded by the real pydantic-ai (1.42 and 2.x)."""
import json
import re

import pytest
import warnings
from pydantic_ai import Agent
from pydantic_ai.messages import (ModelMessagesTypeAdapter, ModelRequest, ModelResponse, SystemPromptPart,
                                  TextPart, ToolCallPart, ToolReturnPart, UserPromptPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import peer_reference
from conftest import FIXTURES, HISTORIES, SYSTEM_PROMPT, load_history, run

IDS = [p.stem for p in HISTORIES]


def go_convert(path) -> bytes:
    return run(["convert", "--system-prompt", SYSTEM_PROMPT], stdin=path.read_bytes()).stdout


def test_enough_fixtures():
    assert len(HISTORIES) >= 20


def _subset_equal(emitted, dumped, where):
    """Every field remstore emitted is in pydantic's dump with the same value."""
    if isinstance(emitted, dict):
        assert isinstance(dumped, dict), where
        for k, v in emitted.items():
            assert k in dumped, f"{where}.{k} lost"
            _subset_equal(v, dumped[k], f"{where}.{k}")
    elif isinstance(emitted, list) and emitted and isinstance(emitted[0], (dict, list)):
        assert len(emitted) == len(dumped), where
        for i, (a, b) in enumerate(zip(emitted, dumped)):
            _subset_equal(a, b, f"{where}[{i}]")
    else:
        assert emitted == dumped, f"{where}: {emitted!r} != {dumped!r}"


@pytest.mark.parametrize("path", HISTORIES, ids=IDS)
def test_validate_and_round_trip(path):
    out = go_convert(path)
    msgs = ModelMessagesTypeAdapter.validate_json(out)
    dumped = ModelMessagesTypeAdapter.dump_python(msgs, mode="json")
    _subset_equal(json.loads(out), dumped, "messages")
    # The golden file is these very bytes, now checked by pydantic-ai.
    golden = (FIXTURES / "histories" / "golden" / (path.stem + ".pydantic.json")).read_bytes()
    if not load_history(path):
        # No stored timestamp: the system prompt carries the conversion time
        # (the Go golden test fixes the clock); compare with it masked.
        mask = lambda b: re.sub(rb'"timestamp":"[^"]*"', b'"timestamp":"T"', b)
        out, golden = mask(out), mask(golden)
    assert out == golden, "the binary's output differs from the checked-in golden"


@pytest.mark.parametrize("path", HISTORIES, ids=IDS)
def test_agent_run_sees_history(path):
    history = ModelMessagesTypeAdapter.validate_json(go_convert(path))
    seen = []

    def model(messages, info: AgentInfo) -> ModelResponse:
        seen.extend(messages)
        return ModelResponse(parts=[TextPart(content="ok")])

    agent = Agent(FunctionModel(model), system_prompt="agent's own prompt, unused when history is given")
    result = agent.run_sync("next question", message_history=history)
    assert result.output == "ok"
    first = seen[0].parts[0]
    assert isinstance(first, SystemPromptPart) and first.content == SYSTEM_PROMPT
    assert isinstance(seen[-1], ModelRequest) and any(
        isinstance(p, UserPromptPart) and p.content == "next question" for p in seen[-1].parts)
    # every tool call is answered by the next request with the same ids
    for i, m in enumerate(seen):
        calls = [p for p in m.parts if isinstance(p, ToolCallPart)]
        if calls:
            nxt = seen[i + 1]
            rets = [p for p in nxt.parts if isinstance(p, ToolReturnPart)]
            assert [c.tool_call_id for c in calls] == [r.tool_call_id for r in rets]
            assert all(isinstance(c.args, dict) for c in calls)
    # texts intact
    src = load_history(path)
    texts = [p.content for m in seen for p in m.parts if isinstance(p, TextPart)]
    want = [m["content"] for m in src if m.get("role") in ("assistant", "model") and m.get("content")]
    assert texts[: len(want)] == want


def _expected_args(args, content):
    """remstore's documented difference: non-object arguments become an object."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            v = json.loads(args)
        except ValueError:
            return {}
        return v if isinstance(v, dict) else {}
    return {}


def _typed_args(call):
    fn = call.get("function") or {}
    args = call.get("arguments", fn.get("arguments"))
    return _expected_args(args or "{}", None)


@pytest.mark.parametrize("path", HISTORIES, ids=IDS)
def test_matches_peer_reference(path):
    src = load_history(path)
    ref = peer_reference.session_to_pydantic_messages(src, system_prompt=SYSTEM_PROMPT)
    got = ModelMessagesTypeAdapter.validate_json(go_convert(path))
    # Call arguments: the tool message's tool_arguments where present, as
    # the peer takes them (SPEC §5), even where a call stored on the
    # assistant message (tool_calls) says otherwise. remstore's documented
    # difference: without tool_arguments a stored call's own arguments go;
    # the peer, which knows no stored calls, parses the tool's content.
    typed = {c["id"]: _typed_args(c) for m in src for c in (m.get("tool_calls") or [])}
    for m in src:
        if m.get("role") in ("tool", "function") and m.get("tool_arguments") is not None:
            typed.pop(m.get("tool_call_id"), None)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert type(g) is type(r)
        assert len(g.parts) == len(r.parts)
        for gp, rp in zip(g.parts, r.parts):
            assert type(gp) is type(rp)
            for field in ("content", "tool_name", "tool_call_id"):
                if hasattr(rp, field):
                    assert getattr(gp, field) == getattr(rp, field), field
            if isinstance(rp, ToolCallPart):
                want = typed[gp.tool_call_id] if gp.tool_call_id in typed else _expected_args(rp.args, None)
                assert gp.args == want
        if isinstance(r, ModelResponse):
            assert g.model_name == "recovered"


def test_peer_reference_output_fails_where_remstore_does_not():
    """The peer emits list/number arguments; pydantic-ai rejects them on reload."""
    path = FIXTURES / "histories" / "16_non_object_tool_arguments.json"
    ref = peer_reference.session_to_pydantic_messages(load_history(path))
    with pytest.raises(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(ref))
    ModelMessagesTypeAdapter.validate_json(go_convert(path))
