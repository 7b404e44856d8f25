"""Registers the peer suite's fixture and writes its matrix (see peerlib)."""
import json
import pathlib

from peerlib import ROOT, database  # noqa: F401  (the fixture)
import peerlib


def pytest_sessionfinish(session, exitstatus):
    if peerlib.MATRIX:
        out = ROOT / ".test-output"
        out.mkdir(exist_ok=True)
        (out / "peer-matrix.json").write_text(json.dumps(peerlib.MATRIX, indent=1, sort_keys=True))
