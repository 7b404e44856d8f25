"""The API's errors as exceptions: one class per status a caller handles
differently, each carrying the error body serve sent."""
from __future__ import annotations

from typing import Any


class RemstoreError(Exception):
    """An error answer of `remstore serve`, or no answer at all.

    status is the HTTP status (None when no answer came); code, message and
    field are the API's error body (`{"error": {"code", "message", "field"}}`),
    body the whole decoded body (or the raw text when it was not JSON).
    """

    status: int | None
    code: str
    field: str | None
    body: Any
    request_id: str | None  # the call's X-Request-Id: the server's log names it
    url: str | None  # the server's base URL
    pending: Any  # a store given up on (PendingStore): client.store_pending(err.pending) stores it once

    def __init__(self, message: str, *, status: int | None = None, code: str = "",
                 field: str | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.field = field
        self.body = body
        self.request_id = None
        self.url = None
        self.pending = None

    def __str__(self) -> str:
        parts = [f"{self.status}" if self.status else "", self.code, self.message]
        s = ": ".join(p for p in parts if p)
        if self.field:
            s += f" (field {self.field!r})"
        if self.request_id:
            s += f" [request {self.request_id} at {self.url}]"
        return s


class BadRequest(RemstoreError):
    """400: the input was refused; `field` names what was wrong. Nothing was stored."""


class Unauthorized(RemstoreError):
    """401: no API key, or a wrong one."""


class Forbidden(RemstoreError):
    """403: the key may not act for that user."""


class NotFound(RemstoreError):
    """404: no such session (for this user), or no text behind a key."""


class Conflict(RemstoreError):
    """409: the session is not active, moved on (SessionMoved), or a fork target exists."""


class SessionMoved(Conflict):
    """409 on a guarded store (expect_last): another turn wrote to the session
    since it was loaded, and nothing was stored. `last` is the session's last
    message now: load again and run the turn again, or store on top of what
    is there with expect_last=err.last."""

    last: str | None = None


class PayloadTooLarge(RemstoreError):
    """413: the body is over the server's limit."""


class TooManyRequests(RemstoreError):
    """429: the server is at its limit of requests in flight. Not retried: the
    caller decides whether to wait (the server's Retry-After is in `retry_after`)."""

    retry_after: float | None = None


class ServerError(RemstoreError):
    """5xx other than 503."""


class Unavailable(ServerError):
    """503: storage is unavailable. Retried (with backoff) before it is raised."""


class ConnectionFailed(RemstoreError):
    """No answer: the server could not be reached, or the connection broke."""


_BY_STATUS: dict[int, type[RemstoreError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
    409: Conflict, 413: PayloadTooLarge, 429: TooManyRequests, 503: Unavailable,
}


def error_for(status: int, body: Any, text: str) -> RemstoreError:
    """The exception for an error answer: the class by status, the fields
    from the API's error body when it has one."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        code, message, field = str(err.get("code") or ""), str(err.get("message") or ""), err.get("field") or None
    else:
        code, message, field = "", text.strip()[:500] or f"HTTP {status}", None
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else RemstoreError)
    if status == 409 and field == "expect_last":
        cls = SessionMoved
    e = cls(message, status=status, code=code, field=field, body=body if body is not None else text)
    if isinstance(e, SessionMoved) and isinstance(err, dict):
        e.last = err.get("last") or None
    return e
