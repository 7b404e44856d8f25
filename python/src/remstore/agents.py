"""A Session of the OpenAI Agents SDK kept in remstore:
Runner.run(agent, input, session=RemstoreSession("chat-1", client)).

Each SDK item becomes one remstore message, the item itself kept beside it
(metadata.openai_agents) so it comes back as it went in:

    user / system / developer message  -> user / system / system row, its text
    assistant message                  -> assistant row, its text (cut when long)
    function_call                      -> assistant row, no text, tool_calls
    function_call_output               -> tool row: call id, name, arguments
    reasoning                          -> assistant row, no text; the item without its summary text
    any other item (a hosted tool, ...) -> assistant row, no text

A reasoning item is kept as OpenAI issued it and checks it, by its id and
encrypted content: its summary is free text the provider does not check, and
a store refuses it (the row's view would not show what the model is sent), so
it is stored, and given back, with an empty summary. What else an item sends
(an image or file beside a message's text, a hosted tool's output) is shown
by the row's view in the viewer.

Rows written by other writers (the Python service, plain dicts) come back as the SDK
items they mean; a tool result whose call was never stored gets one. A call stored
on an assistant row goes with the arguments the tool row answering it names in
tool_arguments, where it names some (SPEC §5), as remstore's pydantic-ai history
and its Go adapters send it.
Importing this module does not need openai-agents; using it with Runner does.

Stores are guarded: add_items names the session's last message as this run
(this asyncio task) last loaded or stored it, so two Runner.run calls racing
on one session do not interleave: the second to store raises SessionMoved and
stores nothing. lookup_tool(client) is the REM LOOKUP tool for
Agent(tools=[...]), for the hints a compressed history carries.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from ._calls import LOOKUP_DESCRIPTION, lookup_retry_text
from ._client import AsyncClient
from ._errors import BadRequest, NotFound, RemstoreError

_log = logging.getLogger("remstore")

__all__ = ["RemstoreSession", "item_to_message", "messages_to_items", "lookup_tool"]

ITEM_KEY = "openai_agents"  # sessionstore.AgentsSourceKey
_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


def _call_fields(tc: Mapping[str, Any]) -> tuple[str, Any]:
    """A stored tool call's name and arguments: remstore loads the flat
    {id, name, arguments}; rows written before it hold OpenAI's
    {id, type, function: {name, arguments}}."""
    fn = tc.get("function") or {}
    return str(tc.get("name") or fn.get("name") or ""), tc.get("arguments", fn.get("arguments"))


def _plain(item: Any) -> dict[str, Any]:
    if hasattr(item, "model_dump"):  # a pydantic model rather than its dict
        item = item.model_dump(mode="json", exclude_unset=True)
    if not isinstance(item, Mapping):
        raise TypeError(f"an Agents SDK item must be a dict, not {type(item).__name__}")
    copy: dict[str, Any] = json.loads(json.dumps(item))  # a deep, JSON-safe copy
    return copy


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for p in content:
            if isinstance(p, Mapping):
                t = p.get("text") if "text" in p else p.get("refusal")
                if isinstance(t, str):
                    out.append(t)
        return "\n\n".join(out)
    return json.dumps(content, ensure_ascii=False)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def item_to_message(item: Any, calls: dict[str, tuple[str, Any]] | None = None) -> dict[str, Any]:
    """The remstore message of one SDK item. calls maps a call id to the
    (name, arguments) of its function_call, so a tool row can name them;
    function_calls seen here are added to it."""
    it = _plain(item)
    calls = {} if calls is None else calls
    kind, role = it.get("type"), it.get("role")
    msg: dict[str, Any]
    if kind in (None, "message") and role in _ROLES:
        msg = {"role": _ROLES[role], "content": _text(it.get("content"))}
    elif kind == "function_call":
        cid, name, args = str(it.get("call_id") or ""), str(it.get("name") or ""), it.get("arguments") or "{}"
        calls[cid] = (name, _arguments(args))
        msg = {"role": "assistant", "content": "",
               "tool_calls": [{"id": cid, "name": name, "arguments": args}]}
    elif kind == "function_call_output":
        cid = str(it.get("call_id") or "")
        out = it.get("output")
        msg = {"role": "tool", "content": out if isinstance(out, str) else _text(out), "tool_call_id": cid}
        if cid in calls:
            msg["tool_name"], msg["tool_arguments"] = calls[cid]
    elif kind == "reasoning":
        it["summary"] = []
        it.pop("content", None)
        msg = {"role": "assistant", "content": ""}
    else:
        msg = {"role": "assistant", "content": ""}
    msg[ITEM_KEY] = it
    return msg


def _cut(item: dict[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    # A long answer comes back cut, with its REM LOOKUP hint: the item says
    # what the row says.
    if row.get("_compressed") and item.get("role") == "assistant":
        item = dict(item)
        item["content"] = [{"type": "output_text", "text": row.get("content", ""), "annotations": []}]
    return item


def messages_to_items(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """SDK items from remstore messages loaded with extras."""
    items: list[dict[str, Any]] = []
    called: set[str] = set()

    def call(cid: str, name: str, args: Any) -> None:
        called.add(cid)
        items.append({"type": "function_call", "call_id": cid, "name": name,
                      "arguments": args if isinstance(args, str) else json.dumps(args if args is not None else {})})

    for i, r in enumerate(rows):
        item = r.get(ITEM_KEY)
        if isinstance(item, Mapping):
            item = _cut(dict(item), r)
            if item.get("type") == "function_call":
                called.add(str(item.get("call_id")))
            items.append(item)
            continue
        role, content = r.get("role"), r.get("content") or ""
        if role == "tool":
            cid = r.get("tool_call_id") or f"call_{r.get('id') or i}"
            if cid not in called:
                call(cid, r.get("tool_name") or "tool", r.get("tool_arguments"))
            items.append({"type": "function_call_output", "call_id": cid, "output": content})
        elif role == "assistant":
            if content:
                items.append({"role": "assistant", "content": content})
            answers = _answers(rows, i)
            for tc in r.get("tool_calls") or []:
                name, args = _call_fields(tc)
                answer = answers.get(str(tc.get("id")))
                said = None if answer is None else answer.get("tool_arguments")
                if said is not None and said != _arguments(args):
                    args = said  # the tool row says otherwise: it wins (SPEC §5)
                if tc.get("id") not in called:
                    call(str(tc.get("id")), name or "tool", args)
        elif role in ("system", "developer"):
            items.append({"role": role, "content": content})
        else:  # user, and roles only the Python service writes: the model reads them as the user's
            items.append({"role": "user", "content": content})
    return items


def _answers(rows: Sequence[Mapping[str, Any]], i: int) -> dict[str, Mapping[str, Any]]:
    """The tool rows right after row i by the call id each answers (the first
    one, for an id given twice): a call's result, as remstore pairs them."""
    out: dict[str, Mapping[str, Any]] = {}
    j = i + 1
    while j < len(rows) and rows[j].get("role") == "tool":
        out.setdefault(str(rows[j].get("tool_call_id") or ""), rows[j])
        j += 1
    return out


def lookup_tool(client: AsyncClient, name: str = "rem_lookup") -> Any:
    """The REM LOOKUP tool as an Agents SDK function tool, for
    Agent(tools=[lookup_tool(client)]): the text behind a 'REM LOOKUP <key>'
    hint. A key that finds nothing is told to the model, which can try again."""
    from agents import function_tool

    async def rem_lookup(key: str) -> str:
        try:
            return await client.lookup(key)
        except (NotFound, BadRequest) as e:
            return lookup_retry_text(key, e)

    return function_tool(rem_lookup, name_override=name, description_override=LOOKUP_DESCRIPTION)


class RemstoreSession:
    """The Agents SDK's Session protocol over remstore serve.

    compress=False hands the agent every answer in full; by default long
    answers come back cut with their REM LOOKUP hint, as in any load.
    get_items(limit) reads only the last `limit` messages on the server.
    guard=False stores without naming the last message seen (racing runs
    then interleave). A client made here is closed by aclose().
    """

    session_settings: Any = None

    def __init__(self, session_id: str, client: AsyncClient | None = None, *, compress: bool = True,
                 session_settings: Any = None, guard: bool = True) -> None:
        if not session_id:
            raise ValueError("session_id must not be empty")
        if client is not None and not isinstance(client, AsyncClient):
            raise TypeError(f"RemstoreSession needs a remstore.AsyncClient (the Agents SDK awaits the session), "
                            f"not {type(client).__name__}")
        self.session_id = session_id
        self._own = client is None
        self.client = client if client is not None else AsyncClient()
        self.compress = compress
        self.session_settings = session_settings
        self.guard = guard
        self._calls: dict[str, tuple[str, Any]] = {}
        # The last message as this task last saw it: a ContextVar, so that
        # two runs racing on one session object each keep their own.
        self._last: ContextVar[str | None] = ContextVar(f"remstore_last_{id(self)}", default=None)
        # The rows this task last loaded: the history an audited call saw.
        self._rows: ContextVar[list[dict[str, Any]]] = ContextVar(f"remstore_rows_{id(self)}", default=[])

    async def aclose(self) -> None:
        """Close the client this session made (a client passed in is the caller's)."""
        if self._own:
            await self.client.aclose()

    async def get_items(self, limit: int | None = None) -> list[Any]:
        if limit is not None and limit <= 0:
            return []
        rows = await self.client.load(self.session_id, compress=self.compress, extras=True, last_n=limit)
        self._last.set(rows.last)
        self._rows.set(list(rows))
        for r in rows:
            for tc in r.get("tool_calls") or []:
                name, args = _call_fields(tc)
                self._calls[str(tc.get("id"))] = (name, _arguments(args))
        items = messages_to_items(rows)
        return items if limit is None else items[-limit:]

    async def add_items(self, items: list[Any]) -> None:
        if not items:
            return
        msgs = [item_to_message(it, self._calls) for it in items]
        expect = self._last.get() if self.guard else None
        res = await self.client.store(self.session_id, msgs, expect_last=expect)
        self._last.set(res.get("last"))

    def hooks(self) -> Any:
        """RunHooks recording each model call of a run in this session's audit dump on the server
        (DEBUG_AUDIT_SESSION there), as the model received it: the instructions and input items,
        the tools and settings of the agent, the output, the usage and the time:
        Runner.run(agent, input, session=s, hooks=s.hooks()). The SDK shows a session no model
        call, so the record takes this one argument. Recording never fails the run."""
        return _audit_hooks(self)

    async def pop_item(self) -> Any | None:
        self._last.set(None)  # the session's last message is another now
        try:
            row = await self.client.pop_message(self.session_id)
        except NotFound:
            return None
        if row is None:
            return None
        item = row.get(ITEM_KEY)
        if isinstance(item, Mapping):
            return dict(item)
        got = messages_to_items([row])
        return got[-1] if got else None

    async def clear_session(self) -> None:
        self._last.set(None)
        try:
            await self.client.clear_messages(self.session_id)
        except NotFound:
            pass


def _jsonable(v: Any) -> Any:
    from pydantic_core import to_jsonable_python
    return to_jsonable_python(v, fallback=repr)


def _tool_json(t: Any) -> dict[str, Any]:
    out = {"name": getattr(t, "name", type(t).__name__)}
    for k in ("description", "params_json_schema", "strict_json_schema"):
        if hasattr(t, k):
            out[k] = _jsonable(getattr(t, k))
    return out


def _model_name(model: Any) -> str | None:
    if model is None or isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else type(model).__name__


def _audit_hooks(session: RemstoreSession) -> Any:
    from agents import RunHooks

    class _AuditHooks(RunHooks[Any]):
        def __init__(self) -> None:
            self._start: tuple[float, str | None, list[Any], list[Any]] | None = None

        async def on_llm_start(self, context: Any, agent: Any, system_prompt: str | None, input_items: list[Any]) -> None:
            tools = await agent.get_all_tools(context)
            self._start = (time.perf_counter(), system_prompt, [_jsonable(i) for i in input_items], tools)

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            if self._start is None:
                return
            start, system, items, tools = self._start
            self._start = None
            ms = (time.perf_counter() - start) * 1000
            prompt = next((i.get("content") for i in reversed(items) if isinstance(i, dict) and i.get("role") == "user"
                           and isinstance(i.get("content"), str)), None)
            settings = agent.model_settings.to_json_dict() if hasattr(agent.model_settings, "to_json_dict") else None
            try:
                await session.client.record_call(
                    session.session_id, agent_name=agent.name, prompt=prompt, history=session._rows.get(),
                    model=_model_name(agent.model), model_settings=settings, tools=[_tool_json(t) for t in tools],
                    request={"system_instructions": system, "input": items},
                    answer=[_jsonable(o) for o in response.output], usage=_jsonable(response.usage), latency_ms=ms)
            except RemstoreError as e:
                _log.warning("remstore: recording the model call in the audit dump failed: %s", e)

    return _AuditHooks()
