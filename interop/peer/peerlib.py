"""The Python peer's own code (../shared/peer) and remstore on one PostgreSQL.

Two databases on the test server: one created by `remstore migrate up`, one by
the peer's own sql/install.sql (its DatabaseService.install_schema), unmodified,
then `remstore migrate up` (indexes and the store function; no column changes).
The peer is imported from ../shared/peer as published; its singleton database
service is pointed at each database in turn with its own DatabaseService.
"""
import asyncio
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PEER = pathlib.Path(os.environ.get("REMSTORE_PEER_DIR") or ROOT.parent / "shared" / "peer")
REQUIRE = os.environ.get("REMSTORE_REQUIRE_PYTHON") == "1" or os.environ.get("REMSTORE_REQUIRE_ALL") == "1"
BASE_URL = os.environ.get("REMSTORE_TEST_DATABASE_URL", "")
DATABASES = ("migrated", "install")
# The suite's databases are PREFIX + "migrated" and PREFIX + "install", made
# afresh: runs sharing one server name their own prefix.
DB_PREFIX = os.environ.get("REMSTORE_PEER_DB_PREFIX", "remstore_peer_")


def _unavailable(why: str):
    if REQUIRE:
        pytest.fail(f"peer suite cannot run under REMSTORE_REQUIRE_ALL=1: {why}", pytrace=False)
    pytest.skip(f"peer suite skipped: {why}", allow_module_level=True)


if not (PEER / "remlight" / "services" / "session" / "store.py").is_file():
    _unavailable(f"the peer's code is not at {PEER} (set REMSTORE_PEER_DIR)")
if not BASE_URL:
    _unavailable("REMSTORE_TEST_DATABASE_URL is not set (run make test)")


def db_url(name: str) -> str:
    """The test server's URL with another database name (remstore and asyncpg alike)."""
    u = urllib.parse.urlsplit(BASE_URL)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + DB_PREFIX + name, u.query, u.fragment))


# The peer reads its settings at import time, from the environment and from a
# .env in the working directory or above: import it from an empty directory.
os.environ["POSTGRES__CONNECTION_STRING"] = db_url("migrated")
os.environ.pop("POSTGRES_ENABLED", None)
_cwd = os.getcwd()
_empty = tempfile.mkdtemp(prefix="remstore-peer-")
os.chdir(_empty)
sys.path.insert(0, str(PEER))
import remlight.services.database as peer_db  # noqa: E402
from remlight.models.entities import Message  # noqa: E402
from remlight.services.repository import Repository  # noqa: E402
from remlight.services.session.pydantic_messages import session_to_pydantic_messages  # noqa: E402
from remlight.services.session.store import MessageCompressor, SessionMessageStore  # noqa: E402

os.chdir(_cwd)
os.rmdir(_empty)

from loguru import logger  # noqa: E402  (the peer logs every call at DEBUG)

logger.remove()
logger.add(sys.stderr, level="ERROR")

# One event loop for the whole suite: the peer's asyncpg pool belongs to it.
LOOP = asyncio.new_event_loop()


def arun(coro):
    return LOOP.run_until_complete(coro)


def remstore(args, stdin=b"", check=True) -> subprocess.CompletedProcess:
    b = os.environ.get("REMSTORE_BIN")
    if not b:
        pytest.fail("REMSTORE_BIN is not set: run the suite with scripts/interop.sh (make test)")
    p = subprocess.run([b, *args], input=stdin, capture_output=True, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"remstore {args} exited {p.returncode}: {p.stderr.decode()}")
    return p


_services = {}
_ready = {}


def _prepare(name: str):
    """Creates the database afresh; returns None, or why it cannot be had."""
    import asyncpg

    async def create():
        admin = await asyncpg.connect(BASE_URL.replace("postgres://", "postgresql://", 1))
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {DB_PREFIX}{name} WITH (FORCE)")
            await admin.execute(f"CREATE DATABASE {DB_PREFIX}{name}")
        finally:
            await admin.close()

    arun(create())
    svc = peer_db.DatabaseService(db_url(name))
    arun(svc.connect())
    if name == "install":
        try:
            arun(svc.install_schema())  # the peer's own install.sql, unmodified
        except Exception as e:  # noqa: BLE001 - reported below
            return f"the peer's install.sql failed: {e}"
    remstore(["migrate", "up", "--db", db_url(name)])
    _services[name] = svc
    return None


@pytest.fixture(params=DATABASES)
def database(request):
    """Points the peer at one database; yields its name and URL."""
    name = request.param
    if name not in _ready:
        _ready[name] = _prepare(name)
    if _ready[name]:
        _unavailable(_ready[name]) if REQUIRE else pytest.skip(_ready[name])
    peer_db._db = _services[name]  # the peer's singleton: its own DatabaseService
    return name, db_url(name)


# MATRIX counts what the suite checked, by database, direction and shape;
# conftest writes it to .test-output/peer-matrix.json for docs/interop.md.
MATRIX: dict = {}


def count(db: str, direction: str, shape: str, what: str, n: int = 1):
    cell = MATRIX.setdefault(f"{db} / {direction} / {shape}", {})
    cell[what] = cell.get(what, 0) + n


def dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True)
