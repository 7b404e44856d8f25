"""The pydantic-ai oracle for the Go SDK adapters (sdk/remopenai,
remanthropic, remgenai): a conversation stored in remstore is loaded twice,
as message dicts for the Go adapter (its request captured by
internal/cmd/sdkreq through the real Go SDK) and as pydantic-ai history for
pydantic-ai's own OpenAI, Anthropic and Google models (their request
captured by a local server). The two requests must say the same. What
differs by design is normalized here, each with its reason, and listed in
docs/interop.md ("The Go SDK adapters beside pydantic-ai")."""
import json
import os
import subprocess

import importlib.metadata

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter

from conftest import HISTORIES, SYSTEM_PROMPT, run, unique
from jsonserver import JSONServer

NEXT = "next question"
PYDANTIC_AI_2 = importlib.metadata.version("pydantic-ai-slim").startswith("2.")

ANSWERS = {
    "openai": {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    "anthropic": {"id": "x", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                  "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 1, "output_tokens": 1}},
    "google": {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
               "modelVersion": "m"},
}


def capture(provider):
    """A local server that records each request and answers as the provider would."""
    return JSONServer(lambda path, body: ANSWERS[provider])


def pydantic_model(provider, url):
    if provider == "openai":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        return OpenAIChatModel("test-model", provider=OpenAIProvider(base_url=url + "/v1", api_key="k"))
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        return AnthropicModel("test-model", provider=AnthropicProvider(base_url=url, api_key="k"))
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider
    return GoogleModel("test-model", provider=GoogleProvider(base_url=url, api_key="k"))


def sdkreq(provider, history):
    b = os.environ.get("REMSTORE_SDKREQ_BIN")
    if not b:
        pytest.fail("REMSTORE_SDKREQ_BIN is not set: run the suite with scripts/interop.sh (make test)")
    p = subprocess.run([b, "-provider", provider, "-system", SYSTEM_PROMPT], input=json.dumps(history).encode(),
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


# --- the neutral form both requests are read into --------------------------

def _loads(s):
    """s as JSON, or the marker NOT_JSON."""
    try:
        return json.loads(s)
    except (TypeError, ValueError):
        return NOT_JSON


NOT_JSON = object()


def check_result(provider, go, py, stored):
    """A tool result's words, the Go adapter's (go) beside pydantic-ai's (py),
    for the stored text: the same, but where docs/interop.md says why not.
    Go's rule is sdk.ResultText / sdk.ResultObject; pydantic-ai reads the
    stored text as SPEC §5 says (parsed; not JSON: {"raw": text}; empty: {})."""
    stored = stored or ""
    v = _loads(stored) if stored else NOT_JSON
    v2 = PYDANTIC_AI_2
    if provider == "google":
        # An object as it is, any other value v as {"return_value": v}, text
        # that is not JSON as {"raw": text}, empty as {}: word for word.
        if v is None and v2:
            assert py == {} and go == {"return_value": None}, (go, py)  # 2.x sends null as {}
            return
        assert _floats(go) == _floats(py), (stored, go, py)
        return
    if isinstance(py, list):  # Anthropic under 2.x: a list result, one text block per item
        assert isinstance(v, list) and py == [x if isinstance(x, str) else json.dumps(x, separators=(",", ":"), ensure_ascii=False)
                                              for x in v], (stored, py)
        assert go == stored, (stored, go)
        return
    if isinstance(v, str):
        # A JSON string (a pydantic-ai tool that returned text): the text it holds, exactly.
        assert go == py == v, (stored, go, py)
    elif v is NOT_JSON:
        # Text that is not JSON, or none: the Go agent's words as stored;
        # pydantic-ai reads {"raw": text}, or {} for none.
        assert go == stored, (stored, go)
        assert _loads(py) == ({"raw": stored} if stored else {}), (stored, py)
    elif v is None and v2 and provider == "openai":
        assert go == "null" and py == "", (go, py)  # 2.x sends None as ""
    else:
        # Other JSON: the same value; pydantic-ai re-writes it compact, its
        # own number forms, where the Go adapter sends the stored text.
        assert go == stored and _loads(py) == v, (stored, go, py)


def _floats(v):
    """genai's FunctionCall.Args is a map of Go float64s: an integer past
    2^53 loses its last digits in the Go SDK itself (and in any genai
    history kept in memory), so the oracle compares such numbers as floats."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and abs(v) > 2 ** 53:
        return float(v)
    if isinstance(v, dict):
        return {k: _floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return v


def _merge(msgs):
    """Consecutive messages of one role are one turn to the provider
    (Anthropic and Gemini join them); pydantic-ai sends a request's tool
    returns and the next prompt together where the Go adapters keep the
    stored rows apart."""
    out = []
    for role, parts in msgs:
        if not parts:  # an empty turn (pydantic-ai 2.x opens a Gemini history that starts with the model so)
            continue
        if out and out[-1][0] == role:
            out[-1] = (role, out[-1][1] + parts)
        else:
            out.append((role, list(parts)))
    # Within an answer, the text comes before the calls in what the
    # providers return and the Go adapters send back; remstore's pydantic-ai
    # history puts the calls first (SPEC §5, the peer's order).
    return [(r, sorted(ps, key=lambda p: p[0] != "text") if r == "assistant" else ps) for r, ps in out]


def neutral_openai(body):
    msgs = []
    for m in body["messages"]:
        role, parts = m["role"], []
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        if role == "tool":
            parts.append(("result", m["tool_call_id"], content))
            role = "user"
        elif content:
            parts.append(("text", content))
        for c in m.get("tool_calls") or []:
            parts.append(("call", c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")))
        msgs.append((role, parts))
    system = [p for r, ps in msgs if r == "system" for p in ps]
    return system, _merge([(r, ps) for r, ps in msgs if r != "system"])


def neutral_anthropic(body):
    sysv = body.get("system") or []
    system = [("text", sysv)] if isinstance(sysv, str) else [("text", b["text"]) for b in sysv]
    msgs = []
    for m in body["messages"]:
        parts = []
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for b in content:
            if b["type"] == "text":
                parts.append(("text", b["text"]))
            elif b["type"] == "tool_use":
                parts.append(("call", b["id"], b["name"], b["input"]))
            elif b["type"] == "tool_result":
                c = b.get("content")
                if isinstance(c, list) and len(c) > 1:
                    # pydantic-ai 2.x sends a list result as one block per item
                    c = [x.get("text", "") for x in c]
                elif isinstance(c, list):
                    c = "".join(x.get("text", "") for x in c)
                # is_error false is the Go SDK's explicit default; pydantic-ai leaves it out.
                parts.append(("result", b["tool_use_id"], c))
            else:
                parts.append((b["type"],))
        msgs.append(({"user": "user", "assistant": "assistant"}[m["role"]], parts))
    return system, _merge(msgs)


def neutral_google(body):
    si = body.get("systemInstruction") or body.get("system_instruction")
    system = [("text", p["text"]) for p in (si or {}).get("parts", [])]
    msgs = []
    for c in body["contents"]:
        parts = []
        for p in c["parts"]:
            if "functionCall" in p or "function_call" in p:
                fc = p.get("functionCall") or p.get("function_call")
                parts.append(("call", fc["name"], _floats(fc.get("args") or {})))
            elif "functionResponse" in p or "function_response" in p:
                fr = p.get("functionResponse") or p.get("function_response")
                parts.append(("result", fr["name"], fr.get("response") or {}))
            elif p.get("text"):
                parts.append(("text", p["text"]))
        msgs.append(({"user": "user", "model": "assistant"}[c["role"]], parts))
    return system, _merge(msgs)


NEUTRAL = {"openai": neutral_openai, "anthropic": neutral_anthropic, "google": neutral_google}


TOOL_FIELDS = ("tool_call_id", "tool_name", "tool_arguments")


def storable(msgs):
    """The fixture as a store keeps it: a legacy "function" result keeps its
    text only (the Python service drops its tool fields; remstore refuses
    them, so the fixture's are left out here, as that service would)."""
    return [{k: v for k, v in m.items() if m.get("role") == "tool" or k not in TOOL_FIELDS} for m in msgs]


def stored(path):
    """The fixture stored in remstore (SQLite file) and loaded back twice."""
    sid, env = unique("oracle"), {"REMSTORE_DB": os.environ["ORACLE_DB"], "REMSTORE_USER_ID": "oracle"}
    run(["store", "--session-id", sid], stdin=json.dumps(storable(json.loads(path.read_bytes()))).encode(), env=env)
    dicts = json.loads(run(["load", "--session-id", sid, "--extras"], env=env).stdout)
    pai = run(["load", "--session-id", sid, "--format", "pydantic-ai", "--system-prompt", SYSTEM_PROMPT], env=env).stdout
    return dicts, pai


@pytest.fixture(scope="module", autouse=True)
def oracle_db(tmp_path_factory):
    os.environ["ORACLE_DB"] = str(tmp_path_factory.mktemp("oracle") / "oracle.db")
    run(["migrate", "up"], env={"REMSTORE_DB": os.environ["ORACLE_DB"]})
    yield


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_go_request_matches_pydantic_ai(provider, path):
    """The same request, and each tool result in the same words (check_result)."""
    dicts, pai = stored(path)
    history = ModelMessagesTypeAdapter.validate_json(pai)
    cap = capture(provider)
    try:
        Agent(pydantic_model(provider, cap.url)).run_sync(NEXT, message_history=history)
    finally:
        cap.close()
    assert len(cap.requests) == 1
    want = NEUTRAL[provider](cap.bodies()[0])
    got = NEUTRAL[provider](sdkreq(provider, dicts + [{"role": "user", "content": NEXT}]))
    results = [m.get("content") for m in dicts if m.get("role") in ("tool", "function")]
    go_results, py_results = _results(got), _results(want)
    assert len(go_results) == len(py_results) == len(results), (go_results, py_results, results)
    for g, p, r in zip(go_results, py_results, results):
        check_result(provider, g[2], p[2], r)
        g[2] = p[2] = "checked"
    assert got == want, f"Go {provider} request:\n{got}\npydantic-ai's:\n{want}"


def _results(neutral):
    """The result parts of a neutral request, in order, as lists to mark checked."""
    out = []
    for _, parts in neutral[1]:
        for k, p in enumerate(parts):
            if p[0] == "result":
                parts[k] = list(p)
                out.append(parts[k])
    return out
