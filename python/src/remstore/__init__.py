"""remstore: a client of `remstore serve` — store agent conversations, load
them back as message dicts or pydantic-ai history, recover cut text by REM
LOOKUP. remstore.pydantic_ai and remstore.agents plug it into agent loops."""
from ._calls import (EMPTY, History, PendingStore, SearchHit, Session, SessionPage, SessionWithMessages, StoreResult,
                     UnmappedWarning)
from ._client import AsyncClient, Client
from ._errors import (BadRequest, Conflict, ConnectionFailed, Forbidden, NotFound, PayloadTooLarge, RemstoreError,
                      ServerError, SessionMoved, TooManyRequests, Unauthorized, Unavailable)

__version__ = "0.2.0"

__all__ = [
    "AsyncClient", "Client", "SearchHit", "Session", "SessionPage", "SessionWithMessages", "StoreResult",
    "RemstoreError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "PayloadTooLarge",
    "TooManyRequests", "ServerError", "Unavailable", "ConnectionFailed", "UnmappedWarning",
    "SessionMoved", "History", "PendingStore", "EMPTY",
]
