"""Shared helpers: the remstore binary built by scripts/interop.sh and the fixtures."""
import json
import os
import pathlib
import secrets
import subprocess

import pytest

from remstore_serve import Server

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HISTORIES = sorted((FIXTURES / "histories").glob("*.json"))
SYSTEM_PROMPT = "You are a test agent."  # the same as convert.GoldenSystemPrompt


def remstore_bin() -> str:
    b = os.environ.get("REMSTORE_BIN")
    if not b:
        pytest.fail("REMSTORE_BIN is not set: run the suite with scripts/interop.sh (make test)")
    return b


def run(args, stdin: bytes = b"", env=None, check=True) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([remstore_bin(), *args], input=stdin, capture_output=True, env=e, timeout=120)
    if check and p.returncode != 0:
        raise AssertionError(f"remstore {args} exited {p.returncode}: {p.stderr.decode()}")
    return p


def load_history(path) -> list:
    return json.loads(pathlib.Path(path).read_text())


# --- remstore serve on the test PostgreSQL, for the Python client's tests ---

PG_URL = os.environ.get("REMSTORE_TEST_DATABASE_URL", "")
REQUIRE = os.environ.get("REMSTORE_REQUIRE_PYTHON") == "1" or os.environ.get("REMSTORE_REQUIRE_ALL") == "1"


@pytest.fixture
def serve(tmp_path):
    """serve(*args, **env) starts a server on PostgreSQL; all are stopped after the test."""
    if not PG_URL:
        if REQUIRE:
            pytest.fail("REMSTORE_TEST_DATABASE_URL is not set under REMSTORE_REQUIRE_ALL=1", pytrace=False)
    started = []

    def start(*args, **env):
        s = Server(PG_URL or str(tmp_path / "serve.db"), {k: str(v) for k, v in env.items()}, args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def unique(prefix: str) -> str:
    """A session or user id no other test (or earlier run on the same database) uses."""
    return f"{prefix}-{secrets.token_hex(6)}"
