"""pydantic-ai in remstore: a turn in three lines, and a REM LOOKUP tool.

    history = client.load_pydantic_ai("chat-1")
    result = agent.run_sync("Book the cheapest", message_history=history)
    client.store_pydantic_ai("chat-1", result.new_messages())

run_turn / run_turn_sync do exactly that; lookup_tool(client) gives an agent
the tool that recovers text cut with a 'REM LOOKUP <key>' hint.
"""
from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.agent import AgentRunResult

from ._client import AsyncClient, Client
from ._errors import BadRequest, NotFound

__all__ = ["run_turn", "run_turn_sync", "lookup_tool", "LOOKUP_DESCRIPTION"]

LOOKUP_DESCRIPTION = (
    "Recover the full text of an earlier message that was cut to save context. A cut message ends with "
    "'REM LOOKUP <key>'; pass that key (or the whole hint) to get the text back."
)


def run_turn_sync(agent: Agent[Any, Any], client: Client, session: str, prompt: str,
                  **run_kwargs: Any) -> AgentRunResult[Any]:
    """Load the session's history, run the agent on prompt with it, store what
    the run added. Returns the run's result."""
    history = client.load_pydantic_ai(session)
    result = agent.run_sync(prompt, message_history=history, **run_kwargs)
    client.store_pydantic_ai(session, result.new_messages())
    return result


async def run_turn(agent: Agent[Any, Any], client: AsyncClient, session: str, prompt: str,
                   **run_kwargs: Any) -> AgentRunResult[Any]:
    """The asyncio twin of run_turn_sync."""
    history = await client.load_pydantic_ai(session)
    result = await agent.run(prompt, message_history=history, **run_kwargs)
    await client.store_pydantic_ai(session, result.new_messages())
    return result


def _retry(key: str, err: Exception) -> ModelRetry:
    # The model mistyped the key: tell it, so it can try again, instead of
    # failing the run.
    return ModelRetry(f"no text is stored under {key!r} ({err}); copy the key exactly from the REM LOOKUP hint")


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
