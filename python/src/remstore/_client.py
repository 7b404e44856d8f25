"""Client and AsyncClient: the same calls (_calls), sent synchronously or
with asyncio. Each method builds its Call and hands it to _send."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from . import _calls as c
from ._calls import (Call, History, PendingStore, SearchHit, Session, SessionPage, SessionWithMessages, Settings,
                     StoreResult)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

T = TypeVar("T")

_DOC = """
    base_url, api_key and user_id default to REMSTORE_URL (else
    http://127.0.0.1:8088), REMSTORE_API_KEY and REMSTORE_USER_ID. Every
    request is bounded by timeout seconds. A 503 or a broken connection is
    retried up to max_retries times with exponential backoff (backoff,
    doubled, at most max_backoff seconds, jittered); a call that would act
    twice (pop, fork, cancel, delete, clear, update) only when it surely never reached the
    server. A store always carries an Idempotency-Key, so it is sent again
    for store_window seconds (default 60: a restart of serve) however many
    tries that takes; when it gives up, the exception's `pending` holds the
    messages, and store_pending(err.pending) stores them once, later.
    4xx answers are never retried: they raise at once. Errors raise
    RemstoreError subclasses carrying the API's error body, the request id
    (the server's log names it) and the server URL.
"""


class Client:
    __doc__ = "A synchronous client of `remstore serve`.\n" + _DOC

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, user_id: str | None = None,
                 timeout: float = 30.0, max_retries: int = 3, backoff: float = 0.25, max_backoff: float = 4.0,
                 store_window: float = 60.0, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = Settings.resolve(base_url, api_key, user_id, timeout, max_retries, backoff, max_backoff,
                                         store_window)
        self._http = httpx.Client(base_url=self.settings.base_url, headers=self.settings.headers(),
                                  timeout=timeout, transport=transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt, start = 0, time.monotonic()
        while True:
            try:
                out: httpx.Response | httpx.TransportError = self._http.request(
                    call.method, call.path, params=call.params, content=call.body, headers=call.send_headers())
            except httpx.TransportError as exc:
                out = exc
            what, v = call.decide(self.settings, attempt, out, time.monotonic() - start)
            if what == "return":
                return v  # type: ignore[no-any-return]
            if what == "raise":
                raise v
            time.sleep(v)
            attempt += 1

    def store(self, session: str, messages: Sequence[Mapping[str, Any]], *,
              idempotency_key: str | None = None, expect_last: str | None = None) -> StoreResult:
        """Store message dicts (the keys of docs/concepts.md) in one transaction. expect_last (a load's
        History.last, or the previous store's "last") stores only onto the session as loaded:
        SessionMoved when another turn wrote since, and nothing is stored."""
        return self._send(c.store(session, messages, idempotency_key, expect_last))

    def store_pydantic_ai(self, session: str, messages: Sequence[ModelMessage] | bytes, *,
                          idempotency_key: str | None = None, expect_last: str | None = None) -> StoreResult:
        """Store pydantic-ai messages (e.g. result.new_messages()) or their JSON; expect_last as in store."""
        return self._send(c.store_pydantic_ai(session, messages, idempotency_key, expect_last))

    def store_pending(self, pending: PendingStore) -> StoreResult:
        """Store what a failed store left in its exception's `pending`: once, however often."""
        return self._send(c.store_pending(pending))

    def load(self, session: str, *, compress: bool = True, extras: bool = False,
             since: datetime | str | None = None, last_n: int | None = None) -> History:
        """The history as message dicts; long assistant answers cut unless compress=False.
        last_n loads only the last N messages, read on the server alone, tool pairs whole (a
        tool result whose call falls before them is left out with it); since loads only the
        messages created after it, tool pairs whole the same way. The list's `last` is
        the session's last message, for a guarded store (expect_last)."""
        return self._send(c.load(session, compress, extras, since, last_n))

    def load_pydantic_ai(self, session: str, *, system_prompt: str | None = None, compress: bool = True,
                         since: datetime | str | None = None, agent_name: str | None = None,
                         prompt: str | None = None, strict: bool = False,
                         last_n: int | None = None) -> History:
        """The history as pydantic-ai messages, ready for message_history=. A stored row whose role
        has no pydantic-ai form is left out with an UnmappedWarning; strict=True raises instead.
        system_prompt replaces a system prompt stored with the messages; last_n and `last` as in load."""
        return self._send(c.load_pydantic_ai(session, system_prompt, compress, since, agent_name, prompt, strict,
                                             last_n))

    def lookup(self, key: str) -> str:
        """REM LOOKUP: the full text behind a key (bare, or 'REM LOOKUP <key>')."""
        return self._send(c.lookup(key))

    def search(self, q: str, *, in_: str = "content", limit: int | None = None, role: str | None = None,
               session: str | None = None, after: datetime | str | None = None,
               before: datetime | str | None = None, offset: int | None = None,
               agent: str | None = None, tool: str | None = None) -> list[SearchHit]:
        """The user's messages by the words of their content (every word or its start, any case),
        by part of a tool or agent name (in_="tool", "agent"), or a REM LOOKUP key (in_="key");
        newest first. A content or tool search narrows to a role, a session, an agent (part of
        its name), a tool (part of its name: its results and the answers that called it), a time
        window (after inclusive, before exclusive) and pages with offset."""
        return self._send(c.search(q, in_, limit, role, session, after, before, offset, agent, tool))

    def list_sessions(self, *, status: str | Sequence[str] | None = None, agent: str | None = None,
                      owner: str | None = None, created_after: datetime | str | None = None,
                      created_before: datetime | str | None = None, updated_after: datetime | str | None = None,
                      updated_before: datetime | str | None = None, limit: int | None = None,
                      cursor: str | None = None) -> SessionPage:
        """One page of sessions, newest first; pass next_cursor for the next."""
        return self._send(c.list_sessions(status, agent, owner, created_after, created_before, updated_after,
                                          updated_before, limit, cursor))

    def get_session(self, session: str, *, compress: bool = True) -> SessionWithMessages:
        """The session and its messages (cut as a load cuts them unless compress=False); NotFound when the
        user has none by that id."""
        return self._send(c.get_session(session, compress))

    def update_session(self, session: str, *, name: str | None = None, agent_name: str | None = None,
                       settings: Mapping[str, Any] | None = None, status: str | None = None,
                       reason: str | None = None) -> Session:
        """Rename, assign an agent, change settings or status."""
        return self._send(c.update_session(session, name=name, agent_name=agent_name, settings=settings,
                                           status=status, reason=reason))

    def set_status(self, session: str, status: str, *, reason: str | None = None) -> Session:
        """Move the session along its lifecycle (active, completed, cancelled, error); cancel and error record
        reason as a system message."""
        return self.update_session(session, status=status, reason=reason)

    def fork(self, session: str, *, up_to: int | None = None, new_session_id: str | None = None) -> Session:
        """Copy the first up_to live messages (all when None) into a new session (new_session_id, or a new UUID)
        and return it."""
        return self._send(c.fork(session, up_to, new_session_id))

    def record_call(self, session: str, *, call_id: str | None = None, agent_name: str | None = None,
                    prompt: str | None = None, history: Sequence[Mapping[str, Any]] | None = None,
                    model: str | None = None, model_settings: Any = None, tools: Any = None, request: Any = None,
                    answer: Any = None, latency_ms: float | None = None, usage: Any = None) -> dict[str, Any]:
        """Record one model call in the session's audit dump on the server (DEBUG_AUDIT_SESSION there):
        with call_id (History.audit_call of an audited load) it completes that load's invocation with
        what the model received and answered; without it, it appends one with agent_name, prompt and
        the history it saw. Returns {"recorded": bool, ...}; recorded is false, with a "reason", when
        the server does not audit or the session's dump is full (32 MiB). run_turn does this for a
        pydantic-ai agent."""
        return self._send(c.record_call(session, dict(call_id=call_id, agent_name=agent_name, prompt=prompt,
                                                      history=None if history is None else list(history), model=model,
                                                      model_settings=model_settings, tools=tools, request=request,
                                                      answer=answer, latency_ms=latency_ms, usage=usage)))

    def cancel(self, session: str, *, reason: str | None = None) -> Session:
        """Cancel the session, recording reason as a system message: it takes no new messages."""
        return self._send(c.cancel(session, reason))

    def delete_session(self, session: str, *, purge: bool = False) -> None:
        """Soft-delete the session and the user's messages in it (loads and lookups stop finding them);
        purge=True removes them for good."""
        return self._send(c.delete_session(session, purge))

    def pop_message(self, session: str) -> dict[str, Any] | None:
        """Soft-delete the last message and return it in full (None if none is left)."""
        return self._send(c.pop_message(session))

    def clear_messages(self, session: str) -> int:
        """Soft-delete every message of the session; returns how many."""
        return self._send(c.clear_messages(session))

    def ready(self) -> bool:
        """True when the server answers /readyz (its storage is reachable), False when it answers 503 (it
        runs, its storage does not answer); ConnectionFailed when no server answers."""
        return self._send(c.health())


class AsyncClient:
    __doc__ = "An asyncio client of `remstore serve`.\n" + _DOC

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, user_id: str | None = None,
                 timeout: float = 30.0, max_retries: int = 3, backoff: float = 0.25, max_backoff: float = 4.0,
                 store_window: float = 60.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = Settings.resolve(base_url, api_key, user_id, timeout, max_retries, backoff, max_backoff,
                                         store_window)
        self._http = httpx.AsyncClient(base_url=self.settings.base_url, headers=self.settings.headers(),
                                       timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        attempt, start = 0, time.monotonic()
        while True:
            try:
                out: httpx.Response | httpx.TransportError = await self._http.request(
                    call.method, call.path, params=call.params, content=call.body, headers=call.send_headers())
            except httpx.TransportError as exc:
                out = exc
            what, v = call.decide(self.settings, attempt, out, time.monotonic() - start)
            if what == "return":
                return v  # type: ignore[no-any-return]
            if what == "raise":
                raise v
            await asyncio.sleep(v)
            attempt += 1

    async def store(self, session: str, messages: Sequence[Mapping[str, Any]], *,
                    idempotency_key: str | None = None, expect_last: str | None = None) -> StoreResult:
        return await self._send(c.store(session, messages, idempotency_key, expect_last))

    async def store_pydantic_ai(self, session: str, messages: Sequence[ModelMessage] | bytes, *,
                                idempotency_key: str | None = None, expect_last: str | None = None) -> StoreResult:
        return await self._send(c.store_pydantic_ai(session, messages, idempotency_key, expect_last))

    async def store_pending(self, pending: PendingStore) -> StoreResult:
        return await self._send(c.store_pending(pending))

    async def load(self, session: str, *, compress: bool = True, extras: bool = False,
                   since: datetime | str | None = None, last_n: int | None = None) -> History:
        return await self._send(c.load(session, compress, extras, since, last_n))

    async def load_pydantic_ai(self, session: str, *, system_prompt: str | None = None, compress: bool = True,
                               since: datetime | str | None = None, agent_name: str | None = None,
                               prompt: str | None = None, strict: bool = False,
                               last_n: int | None = None) -> History:
        return await self._send(c.load_pydantic_ai(session, system_prompt, compress, since, agent_name, prompt,
                                                   strict, last_n))

    async def lookup(self, key: str) -> str:
        return await self._send(c.lookup(key))

    async def search(self, q: str, *, in_: str = "content", limit: int | None = None, role: str | None = None,
                     session: str | None = None, after: datetime | str | None = None,
                     before: datetime | str | None = None, offset: int | None = None,
                     agent: str | None = None, tool: str | None = None) -> list[SearchHit]:
        return await self._send(c.search(q, in_, limit, role, session, after, before, offset, agent, tool))

    async def list_sessions(self, *, status: str | Sequence[str] | None = None, agent: str | None = None,
                            owner: str | None = None, created_after: datetime | str | None = None,
                            created_before: datetime | str | None = None,
                            updated_after: datetime | str | None = None,
                            updated_before: datetime | str | None = None, limit: int | None = None,
                            cursor: str | None = None) -> SessionPage:
        return await self._send(c.list_sessions(status, agent, owner, created_after, created_before, updated_after,
                                                updated_before, limit, cursor))

    async def get_session(self, session: str, *, compress: bool = True) -> SessionWithMessages:
        return await self._send(c.get_session(session, compress))

    async def update_session(self, session: str, *, name: str | None = None, agent_name: str | None = None,
                             settings: Mapping[str, Any] | None = None, status: str | None = None,
                             reason: str | None = None) -> Session:
        return await self._send(c.update_session(session, name=name, agent_name=agent_name, settings=settings,
                                                 status=status, reason=reason))

    async def set_status(self, session: str, status: str, *, reason: str | None = None) -> Session:
        return await self.update_session(session, status=status, reason=reason)

    async def fork(self, session: str, *, up_to: int | None = None, new_session_id: str | None = None) -> Session:
        return await self._send(c.fork(session, up_to, new_session_id))

    async def record_call(self, session: str, *, call_id: str | None = None, agent_name: str | None = None,
                          prompt: str | None = None, history: Sequence[Mapping[str, Any]] | None = None,
                          model: str | None = None, model_settings: Any = None, tools: Any = None,
                          request: Any = None, answer: Any = None, latency_ms: float | None = None,
                          usage: Any = None) -> dict[str, Any]:
        return await self._send(c.record_call(session, dict(call_id=call_id, agent_name=agent_name, prompt=prompt,
                                                            history=None if history is None else list(history),
                                                            model=model, model_settings=model_settings, tools=tools,
                                                            request=request, answer=answer, latency_ms=latency_ms,
                                                            usage=usage)))

    async def cancel(self, session: str, *, reason: str | None = None) -> Session:
        return await self._send(c.cancel(session, reason))

    async def delete_session(self, session: str, *, purge: bool = False) -> None:
        return await self._send(c.delete_session(session, purge))

    async def pop_message(self, session: str) -> dict[str, Any] | None:
        return await self._send(c.pop_message(session))

    async def clear_messages(self, session: str) -> int:
        return await self._send(c.clear_messages(session))

    async def ready(self) -> bool:
        return await self._send(c.health())


# The docstrings are written once, on Client: each AsyncClient method that
# has a Client twin gets its text (test_sync_and_async_clients_agree checks
# that the two signatures match, parameter for parameter).
for _name, _sync in vars(Client).items():
    _async = vars(AsyncClient).get(_name)
    if callable(_sync) and callable(_async) and _sync.__doc__ and not _async.__doc__:
        _async.__doc__ = _sync.__doc__
