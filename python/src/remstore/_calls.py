"""What each API call sends and how its answer is read, written once for the
sync and the async client: they differ only in how they wait."""
from __future__ import annotations

import json
import os
import random
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

import httpx

from ._errors import ConnectionFailed, RemstoreError, TooManyRequests, error_for

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8088"  # remstore serve's default --addr


class _StoreResultBase(TypedDict):
    session_id: str
    stored: int  # messages written now; 0 when the same request was already stored
    keys: list[str]  # each stored message's REM LOOKUP key


class StoreResult(_StoreResultBase, total=False):
    last: str  # the session's last message after the store: the next guarded store's expect_last


EMPTY = "empty"  # the last message of a session that has none, for expect_last

# The REM LOOKUP tool's description, for every agent framework's tool (and
# the MCP server's rem_lookup says the same).
LOOKUP_DESCRIPTION = (
    "Recover the full text of an earlier message that was cut to save context. A cut message ends with "
    "'REM LOOKUP <key>'; pass that key (or the whole hint) to get the text back."
)


def lookup_retry_text(key: str, err: Exception) -> str:
    """What the model is told when a key finds nothing: enough to try again."""
    return f"no text is stored under {key!r} ({err}); copy the key exactly from the REM LOOKUP hint"

class History(list):  # type: ignore[type-arg]
    """A loaded history: a list of messages, and `last`, the session's last
    message as the load read it (its id, or "empty"). Pass it as expect_last
    to the store that follows, so that a turn racing this one is refused
    (SessionMoved) rather than woven into it."""

    last: str | None = None
    # The call id of the invocation an audited pydantic-ai load recorded
    # (DEBUG_AUDIT_SESSION on the server): record_call(call_id=...) completes it.
    audit_call: str | None = None


def _history(items: list[Any], resp: httpx.Response) -> History:
    h = History(items)
    h.last = resp.headers.get("X-Remstore-Last")
    h.audit_call = resp.headers.get("X-Remstore-Audit-Call")
    return h


@dataclass(frozen=True)
class PendingStore:
    """A store the client gave up on (an outage longer than store_window, or
    a 5xx): carried by the exception as `pending`. Its Idempotency-Key is the
    one the failed tries carried, so client.store_pending(pending) stores
    its messages once, whether or not a try got through, however often it is
    called. Its guard goes with it."""

    session: str
    path: str
    params: dict[str, str]
    body: bytes
    headers: dict[str, str]

    @property
    def messages(self) -> list[Any]:
        """The messages not stored, as sent (message dicts, or pydantic-ai's message JSON decoded)."""
        out: list[Any] = json.loads(self.body)
        return out

    @property
    def idempotency_key(self) -> str:
        return self.headers["Idempotency-Key"]


class Session(TypedDict, total=False):
    id: str
    name: str
    agent_name: str
    status: str
    settings: dict[str, Any]
    metadata: dict[str, Any]
    user_id: str
    tenant_id: str
    created_at: str
    updated_at: str


class SessionPage(TypedDict, total=False):
    sessions: list[Session]
    total: int
    limit: int
    next_cursor: str


class SessionWithMessages(TypedDict):
    session: Session
    messages: list[dict[str, Any]]


class SearchHit(TypedDict, total=False):
    session_id: str
    session_name: str
    agent_name: str
    role: str
    timestamp: str
    index: int
    key: str
    tool_name: str
    snippet: str


@dataclass(frozen=True)
class Settings:
    """Where the server is and who the client is, from arguments or the
    environment (REMSTORE_URL, REMSTORE_API_KEY, REMSTORE_USER_ID)."""

    base_url: str
    api_key: str | None
    user_id: str | None
    timeout: float
    max_retries: int
    backoff: float  # the first retry's delay, seconds; doubled each time
    max_backoff: float
    store_window: float = 60.0  # seconds a store is sent again across an outage

    @classmethod
    def resolve(cls, base_url: str | None, api_key: str | None, user_id: str | None,
                timeout: float, max_retries: int, backoff: float, max_backoff: float,
                store_window: float = 60.0) -> Settings:
        if max_retries < 0 or max_retries > 10:
            raise ValueError("max_retries must be 0 to 10")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if store_window < 0:
            raise ValueError("store_window must be >= 0 seconds")
        url = (base_url or os.environ.get("REMSTORE_URL") or DEFAULT_URL).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://: {url!r}")
        return cls(url, api_key or os.environ.get("REMSTORE_API_KEY") or None,
                   user_id or os.environ.get("REMSTORE_USER_ID") or None,
                   timeout, max_retries, backoff, max_backoff, store_window)

    def headers(self) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": "remstore-python/0.1"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        if self.user_id:
            h["X-User-Id"] = self.user_id
        return h

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry number attempt (0-based): exponential with
        jitter, or the server's Retry-After, never over max_backoff."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff)
        d = min(self.backoff * 2.0 ** attempt, self.max_backoff)
        return float(d * (0.5 + random.random() / 2))


# How safe a call is to send again (fixtures/client/retry_policy.json, which
# the Go client follows too). "resend": the same request twice has the
# effect of one (reads), so it is retried on 503 and on any
# connection error, max_retries times. "durable": a store, which always
# carries an Idempotency-Key: as resend, but for store_window seconds from
# its first try, so a restart of the server does not lose a paid model run.
# "unsent": it would act twice (pop, fork, cancel, delete; a clear or an
# update sent again after it committed would remove what was stored since,
# or meet its own change), so it is retried only when it surely never
# reached the server (connecting failed).
Safety = Literal["resend", "unsent", "durable"]

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    safety: Safety = "resend"
    # One X-Request-Id for every try of the call: the server logs them under
    # it, and an exception names it even when no answer came.
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    session: str = ""  # a store's session, for its PendingStore
    answers: tuple[int, ...] = ()  # error statuses that parse reads as an answer

    def send_headers(self) -> dict[str, str]:
        return {**self.headers, "X-Request-Id": self.request_id}

    def decide(self, s: Settings, attempt: int, out: httpx.Response | httpx.TransportError,
               elapsed: float = 0.0) -> tuple[str, Any]:
        """What to do after try number attempt (0-based), elapsed seconds
        after the first began, gave out: ("return", value), ("raise", error)
        or ("sleep", seconds) before the next try."""
        if self.safety == "durable":
            last = elapsed >= s.store_window
        else:
            last = attempt >= s.max_retries
        if isinstance(out, httpx.TransportError):
            if last or not self.retry_exc(out):
                err = self.connection_failed(out, attempt + 1, s)
                err.__cause__ = out
                return "raise", err
            return "sleep", self.pause(s, s.delay(attempt, None), elapsed)
        if out.is_success or out.status_code in self.answers:
            return "return", self.parse(out)
        if last or not self.retry_status(out.status_code):
            return "raise", self.failure(out, s)
        return "sleep", self.pause(s, s.delay(attempt, retry_after(out)), elapsed)

    def pause(self, s: Settings, d: float, elapsed: float) -> float:
        # A durable call's last try comes at its window's end, not past it.
        return max(min(d, s.store_window - elapsed), 0.001) if self.safety == "durable" else d

    def retry_status(self, status: int) -> bool:
        return status == 503 and self.safety != "unsent"

    def retry_exc(self, exc: Exception) -> bool:
        if isinstance(exc, _NOT_SENT):
            return True
        return self.safety != "unsent" and isinstance(exc, httpx.TransportError)

    def pending(self) -> PendingStore | None:
        if self.safety != "durable" or self.body is None:
            return None
        return PendingStore(self.session, self.path, dict(self.params), self.body, dict(self.headers))

    def failure(self, resp: httpx.Response, s: Settings) -> RemstoreError:
        try:
            body = resp.json()
        except ValueError:
            body = None
        err = error_for(resp.status_code, body, resp.text)
        if isinstance(err, TooManyRequests):
            err.retry_after = retry_after(resp)
        err.request_id = resp.headers.get("X-Request-Id") or self.request_id
        err.url = s.base_url
        if resp.status_code >= 500:  # a 4xx is the request's own fault: sending it later fails alike
            err.pending = self.pending()
        return err

    def connection_failed(self, exc: Exception, tries: int, s: Settings) -> RemstoreError:
        maybe = "" if isinstance(exc, _NOT_SENT) or self.safety != "unsent" else \
            " (the request may have reached the server; it was not sent again)"
        # Say what to start, and which setting names the server: a first
        # user with no server running saw only an address and a count.
        err = ConnectionFailed(f"{self.method} {self.path}: {type(exc).__name__}: {exc}{maybe}; {tries} tries at "
                               f"{s.base_url}: is `remstore serve` running there? Start it (it listens on "
                               f"127.0.0.1:8088 by default), or set REMSTORE_URL to where it runs")
        err.request_id, err.url, err.pending = self.request_id, s.base_url, self.pending()
        return err


def retry_after(resp: httpx.Response) -> float | None:
    v = resp.headers.get("Retry-After")
    try:
        return float(v) if v is not None else None
    except ValueError:
        return None


def _json(body: Any) -> bytes:
    # ensure_ascii: a lone surrogate travels as \udXXX and the server refuses
    # it naming the field, instead of failing here without one.
    return json.dumps(body, separators=(",", ":")).encode()


def _seg(session: str) -> str:
    if not isinstance(session, str) or not session:
        raise ValueError("session must be a non-empty string")
    return quote(session, safe="")


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _time(v: datetime | str | None) -> str | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        if v.tzinfo is None:
            raise ValueError("a datetime given to remstore must carry a time zone")
        return v.isoformat()
    return v


def _params(**kw: str | None) -> dict[str, str]:
    return {k: v for k, v in kw.items() if v is not None}


def _as_json(resp: httpx.Response) -> Any:
    return resp.json()


def _none(resp: httpx.Response) -> None:
    return None


def _idem(key: str | None, expect_last: str | None) -> dict[str, str]:
    h = {"Idempotency-Key": key or str(uuid.uuid4()), "Content-Type": "application/json"}
    if expect_last is not None:
        if not isinstance(expect_last, str) or not expect_last:
            raise ValueError('expect_last must be a message id from a load (History.last) or a store answer, or "empty"')
        h["X-Remstore-Expect-Last"] = expect_last
    return h


def _last_n(n: int | None) -> str | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("last_n must be a whole number >= 1")
    return str(n)


# --- the calls -------------------------------------------------------------

def store(session: str, messages: Sequence[Mapping[str, Any]], idempotency_key: str | None,
          expect_last: str | None = None) -> Call[StoreResult]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError("messages must be a list of message dicts")
    return Call("POST", f"/v1/sessions/{_seg(session)}/messages", _as_json,
                body=_json(list(messages)), headers=_idem(idempotency_key, expect_last), safety="durable",
                session=session)


def store_pydantic_ai(session: str, messages: Sequence[ModelMessage] | bytes,
                      idempotency_key: str | None, expect_last: str | None = None) -> Call[StoreResult]:
    if isinstance(messages, (bytes, bytearray)):
        body = bytes(messages)
    else:
        from pydantic_ai.messages import ModelMessagesTypeAdapter
        body = ModelMessagesTypeAdapter.dump_json(list(messages))
    return Call("POST", f"/v1/sessions/{_seg(session)}/messages", _as_json,
                params={"format": "pydantic-ai"}, body=body, headers=_idem(idempotency_key, expect_last),
                safety="durable", session=session)


def store_pending(p: PendingStore) -> Call[StoreResult]:
    if not isinstance(p, PendingStore):
        raise TypeError("store_pending takes the `pending` of a store's exception")
    return Call("POST", p.path, _as_json, params=dict(p.params), body=p.body, headers=dict(p.headers),
                safety="durable", session=p.session)


def _dicts(resp: httpx.Response) -> History:
    return _history(resp.json(), resp)


def load(session: str, compress: bool, extras: bool, since: datetime | str | None,
         last_n: int | None = None) -> Call[History]:
    return Call("GET", f"/v1/sessions/{_seg(session)}/messages", _dicts,
                params=_params(compress=_bool(compress), extras=_bool(extras), since=_time(since), last=_last_n(last_n)))


class UnmappedWarning(UserWarning):
    """A pydantic-ai load left out stored messages whose role has no pydantic-ai form
    (rows the Python service wrote with a role of their own); strict=True makes it an error."""


def _model_messages(resp: httpx.Response) -> History:
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    n = resp.headers.get("X-Remstore-Unmapped")
    if n:
        warnings.warn(f"{n} stored message(s) left out of the pydantic-ai history: their roles have no "
                      "pydantic-ai form (strict=True makes this an error)", UnmappedWarning, stacklevel=4)
    return _history(ModelMessagesTypeAdapter.validate_json(resp.content), resp)


def load_pydantic_ai(session: str, system_prompt: str | None, compress: bool, since: datetime | str | None,
                     agent_name: str | None, prompt: str | None, strict: bool = False,
                     last_n: int | None = None) -> Call[History]:
    return Call("GET", f"/v1/sessions/{_seg(session)}/messages", _model_messages,
                params=_params(format="pydantic-ai", system_prompt=system_prompt, compress=_bool(compress),
                               since=_time(since), agent_name=agent_name, prompt=prompt,
                               strict=_bool(strict) if strict else None, last=_last_n(last_n)))


def lookup(key: str) -> Call[str]:
    if not isinstance(key, str) or not key.strip():
        raise ValueError("key must be a non-empty string")
    return Call("GET", "/v1/lookup", lambda r: r.json()["content"], params={"key": key})


def search(q: str, in_: str, limit: int | None, role: str | None = None, session: str | None = None,
           after: datetime | str | None = None, before: datetime | str | None = None,
           offset: int | None = None, agent: str | None = None, tool: str | None = None) -> Call[list[SearchHit]]:
    if not isinstance(q, str) or not q.strip():
        raise ValueError("q must be a non-empty string")
    return Call("GET", "/v1/search", lambda r: r.json()["hits"],
                params=_params(q=q, **{"in": in_}, limit=None if limit is None else str(limit), role=role, session=session,
                               after=_time(after), before=_time(before), offset=None if offset is None else str(offset),
                               agent=agent, tool=tool))


def list_sessions(status: str | Sequence[str] | None, agent: str | None, owner: str | None,
                  created_after: datetime | str | None, created_before: datetime | str | None,
                  updated_after: datetime | str | None, updated_before: datetime | str | None,
                  limit: int | None, cursor: str | None) -> Call[SessionPage]:
    if status is not None and not isinstance(status, str):
        status = ",".join(status)
    return Call("GET", "/v1/sessions", _as_json, params=_params(
        status=status, agent=agent, owner=owner, created_after=_time(created_after),
        created_before=_time(created_before), updated_after=_time(updated_after),
        updated_before=_time(updated_before), limit=None if limit is None else str(limit), cursor=cursor))


def get_session(session: str, compress: bool) -> Call[SessionWithMessages]:
    return Call("GET", f"/v1/sessions/{_seg(session)}", _as_json, params={"compress": _bool(compress)})


def update_session(session: str, **changes: Any) -> Call[Session]:
    body = {k: v for k, v in changes.items() if v is not None}
    if not body:
        raise ValueError("nothing to change: give name, agent_name, settings or status")
    return Call("PATCH", f"/v1/sessions/{_seg(session)}", _as_json, body=_json(body),
                headers={"Content-Type": "application/json"}, safety="unsent")


def fork(session: str, up_to: int | None, new_session_id: str | None) -> Call[Session]:
    return Call("POST", f"/v1/sessions/{_seg(session)}/fork", _as_json,
                body=_json({k: v for k, v in {"up_to": up_to, "new_session_id": new_session_id}.items() if v is not None}),
                headers={"Content-Type": "application/json"}, safety="unsent")


RECORD_KEYS = frozenset({"call_id", "agent_name", "prompt", "history", "model", "model_settings", "tools", "request",
                         "answer", "latency_ms", "usage"})


def record_call(session: str, record: Mapping[str, Any]) -> Call[dict[str, Any]]:
    unknown = sorted(set(record) - RECORD_KEYS)
    if unknown:
        raise ValueError(f"record_call: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(RECORD_KEYS))}")
    body = {k: v for k, v in record.items() if v is not None}
    return Call("POST", f"/v1/sessions/{_seg(session)}/audit", _as_json, body=_json(body),
                headers={"Content-Type": "application/json"}, safety="unsent")


def cancel(session: str, reason: str | None) -> Call[Session]:
    return Call("POST", f"/v1/sessions/{_seg(session)}/cancel", _as_json,
                body=_json({"reason": reason} if reason is not None else {}),
                headers={"Content-Type": "application/json"}, safety="unsent")


def delete_session(session: str, purge: bool) -> Call[None]:
    return Call("DELETE", f"/v1/sessions/{_seg(session)}", _none, params={"purge": _bool(purge)}, safety="unsent")


def pop_message(session: str) -> Call[dict[str, Any] | None]:
    return Call("DELETE", f"/v1/sessions/{_seg(session)}/messages/last", lambda r: r.json()["message"],
                safety="unsent")


def clear_messages(session: str) -> Call[int]:
    # Not resent once it may have reached the server: a second clear would
    # remove what another writer stored after the first committed.
    return Call("DELETE", f"/v1/sessions/{_seg(session)}/messages", lambda r: int(r.json()["removed"]), safety="unsent")


def health() -> Call[bool]:
    # 503 is an answer here (the server runs, its storage does not answer),
    # not a failure to retry or raise.
    return Call("GET", "/readyz", lambda r: r.status_code == 200, answers=(503,))
