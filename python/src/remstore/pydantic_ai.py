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

from collections.abc import Sequence
from typing import Any

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from ._calls import LOOKUP_DESCRIPTION, History, lookup_retry_text
from ._client import AsyncClient, Client
from ._errors import BadRequest, NotFound

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


def run_turn_sync(agent: Agent[Any, Any], client: Client, session: str, prompt: str, *,
                  history_turns: int | None = None, system_prompt: str | None = None, guard: bool = True,
                  **run_kwargs: Any) -> AgentRunResult[Any]:
    """Load the session's history (its last history_turns turns when given;
    system_prompt replaces a stored one), run the agent on prompt with it,
    store what the run added, guarded unless guard=False. Returns the result."""
    history = client.load_pydantic_ai(session, system_prompt=system_prompt)
    result = agent.run_sync(prompt, message_history=_history(history, history_turns), **run_kwargs)
    client.store_pydantic_ai(session, result.new_messages(), expect_last=history.last if guard else None)
    return result


async def run_turn(agent: Agent[Any, Any], client: AsyncClient, session: str, prompt: str, *,
                   history_turns: int | None = None, system_prompt: str | None = None, guard: bool = True,
                   **run_kwargs: Any) -> AgentRunResult[Any]:
    """The asyncio twin of run_turn_sync."""
    history = await client.load_pydantic_ai(session, system_prompt=system_prompt)
    result = await agent.run(prompt, message_history=_history(history, history_turns), **run_kwargs)
    await client.store_pydantic_ai(session, result.new_messages(), expect_last=history.last if guard else None)
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
