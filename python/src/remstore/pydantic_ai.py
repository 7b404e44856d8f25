"""pydantic-ai in remstore: a turn in three lines, and a REM LOOKUP tool.

    history = client.load_pydantic_ai("chat-1")
    result = agent.run_sync("Book the cheapest", message_history=history)
    client.store_pydantic_ai("chat-1", result.new_messages(), expect_last=history.last)

run_turn / run_turn_sync do exactly that; lookup_tool(client) gives an agent
the tool that recovers text cut with a 'REM LOOKUP <key>' hint.

The store is guarded (expect_last): a turn that raced another on the same
session raises SessionMoved and stores nothing, instead of weaving its
messages into the other's. The recipe: load again and run the turn again (its
model call is repeated), or store its messages on top of what the session
holds now with client.store_pydantic_ai(..., expect_last=err.last).

A store that cannot reach the server is sent again for the client's
store_window (60 s by default); when it gives up, the exception (e.g.
ConnectionFailed) carries the run's messages in `pending`, and
client.store_pending(err.pending) stores them once, whenever the server is
back (its guard goes with it).
"""
from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse, UserPromptPart
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_core import to_jsonable_python

from ._calls import LOOKUP_DESCRIPTION, History, lookup_retry_text
from ._client import AsyncClient, Client
from ._errors import BadRequest, NotFound, RemstoreError

_log = logging.getLogger("remstore")

__all__ = ["run_turn", "run_turn_sync", "lookup_tool", "last_turns", "LOOKUP_DESCRIPTION"]


def last_turns(messages: Sequence[ModelMessage], n: int) -> list[ModelMessage]:
    """The last n turns of a history: from the n-th last request carrying a
    user prompt to the end (all of it when it holds fewer). A turn's tool
    calls and returns stay with it. The agent's system prompt is in the first
    request: pass system_prompt to the load when the cut leaves it out."""
    if n < 1:
        raise ValueError("n must be >= 1")
    starts = [i for i, m in enumerate(messages)
              if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)]
    if len(starts) <= n:
        return list(messages)
    return list(messages[starts[-n]:])


def _history(history: History, turns: int | None) -> list[ModelMessage]:
    return list(history) if turns is None else last_turns(history, turns)


class _Recording(WrapperModel):
    """The agent's model, recording each request as the model receives it:
    the messages, the settings and tools after the model prepared them, the
    response and the time it took (SPEC §6, amended: the record of a call is
    the call)."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self.calls: list[tuple[list[ModelMessage], ModelSettings | None, ModelRequestParameters, ModelResponse, float]] = []

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        seen_settings, seen_params = self.wrapped.prepare_request(model_settings, model_request_parameters)
        start = time.perf_counter()
        response = await super().request(messages, model_settings, model_request_parameters)
        self.calls.append((list(messages), seen_settings, seen_params, response, (time.perf_counter() - start) * 1000))
        return response


def _recording(agent: Agent[Any, Any], history: History, run_kwargs: dict[str, Any]) -> _Recording | None:
    """A recording wrapper of the model this run uses, when the server
    audits the call (the load named it) and the model is known."""
    model = run_kwargs.get("model") or agent.model
    if not history.audit_call or model is None:
        return None
    rec = _Recording(infer_model(model))
    run_kwargs["model"] = rec
    return rec


def _exchange(rec: _Recording, result: AgentRunResult[Any], ms: float) -> dict[str, Any]:
    """What the server's invocation gets: the messages the model received at
    the run's last request (which hold the whole conversation, the prompt
    and instructions included), the settings and tools it was given, every
    message the run added, the run's time and usage."""
    ex: dict[str, Any] = {"latency_ms": ms, "answer": json.loads(result.new_messages_json()),
                          "usage": to_jsonable_python(_run_usage(result))}
    if rec.calls:
        messages, settings, params, response, _ = rec.calls[-1]
        ex["request"] = json.loads(ModelMessagesTypeAdapter.dump_json(messages))
        ex["tools"] = to_jsonable_python(list(params.function_tools))
        ex["model_settings"] = to_jsonable_python(settings) if settings else None
        ex["model"] = response.model_name
    return ex


def _run_usage(result: AgentRunResult[Any]) -> Any:
    """The run's usage: a method in pydantic-ai 1.x, a property in 2.x
    (where calling it is deprecated)."""
    if isinstance(inspect.getattr_static(type(result), "usage", None), property):
        return result.usage
    return result.usage()  # type: ignore[operator,unused-ignore]


def _record_failed(err: Exception) -> None:
    # Auditing never fails the caller.
    _log.warning("remstore: recording the call in the audit dump failed: %s", err)


def run_turn_sync(agent: Agent[Any, Any], client: Client, session: str, prompt: str, *,
                  history_turns: int | None = None, system_prompt: str | None = None, guard: bool = True,
                  **run_kwargs: Any) -> AgentRunResult[Any]:
    """Load the session's history (its last history_turns turns when given;
    system_prompt replaces a stored one), run the agent on prompt with it,
    store what the run added, guarded unless guard=False. Returns the result.
    When the server audits (DEBUG_AUDIT_SESSION), the call is recorded as the
    model received it: messages, settings, tools, answer, time and usage."""
    history = client.load_pydantic_ai(session, system_prompt=system_prompt, prompt=prompt)
    rec = _recording(agent, history, run_kwargs)
    start = time.perf_counter()
    result = agent.run_sync(prompt, message_history=_history(history, history_turns), **run_kwargs)
    ms = (time.perf_counter() - start) * 1000
    client.store_pydantic_ai(session, result.new_messages(), expect_last=history.last if guard else None)
    if rec is not None:
        try:
            client.record_call(session, call_id=history.audit_call, **_exchange(rec, result, ms))
        except RemstoreError as e:
            _record_failed(e)
    return result


async def run_turn(agent: Agent[Any, Any], client: AsyncClient, session: str, prompt: str, *,
                   history_turns: int | None = None, system_prompt: str | None = None, guard: bool = True,
                   **run_kwargs: Any) -> AgentRunResult[Any]:
    """The asyncio twin of run_turn_sync."""
    history = await client.load_pydantic_ai(session, system_prompt=system_prompt, prompt=prompt)
    rec = _recording(agent, history, run_kwargs)
    start = time.perf_counter()
    result = await agent.run(prompt, message_history=_history(history, history_turns), **run_kwargs)
    ms = (time.perf_counter() - start) * 1000
    await client.store_pydantic_ai(session, result.new_messages(), expect_last=history.last if guard else None)
    if rec is not None:
        try:
            await client.record_call(session, call_id=history.audit_call, **_exchange(rec, result, ms))
        except RemstoreError as e:
            _record_failed(e)
    return result


def _retry(key: str, err: Exception) -> ModelRetry:
    # The model mistyped the key: tell it, so it can try again, instead of
    # failing the run.
    return ModelRetry(lookup_retry_text(key, err))


def lookup_tool(client: Client | AsyncClient, name: str = "rem_lookup") -> Tool[Any]:
    """A pydantic-ai tool calling the API's lookup, for Agent(tools=[...]).
    The same tool the MCP server offers as rem_lookup."""
    if isinstance(client, AsyncClient):
        aclient = client

        async def alookup(key: str) -> str:
            try:
                return await aclient.lookup(key)
            except (NotFound, BadRequest) as e:
                raise _retry(key, e) from e

        return Tool(alookup, takes_ctx=False, name=name, description=LOOKUP_DESCRIPTION)
    sclient = client

    def lookup(key: str) -> str:
        try:
            return sclient.lookup(key)
        except (NotFound, BadRequest) as e:
            raise _retry(key, e) from e

    return Tool(lookup, takes_ctx=False, name=name, description=LOOKUP_DESCRIPTION)
