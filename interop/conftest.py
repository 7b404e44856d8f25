"""Shared helpers: the remstore binary built by scripts/interop.sh and the fixtures."""
import json
import os
import pathlib
import subprocess

import pytest

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
