"""docs/python.md (and the README's client snippet) runs as written: every ```python block, in order, each in a
fresh interpreter (as a user pastes it into a file), against `remstore serve`
on PostgreSQL and a local stand-in for the OpenAI API. Each must exit 0 and
print what its "# → ..." comments say."""
import os
import re
import subprocess
import sys

from conftest import ROOT, unique
from fake_openai import FakeOpenAI

DOC = ROOT / "docs" / "python.md"


def blocks():
    """docs/python.md's python blocks, then the README's that use the client."""
    find = lambda path: re.findall(r"^```python\n(.*?)^```$", path.read_text(), flags=re.S | re.M)  # noqa: E731
    return find(DOC) + [b for b in find(ROOT / "README.md") if "import remstore" in b]


def test_docs_python_runs_as_written(serve, tmp_path):
    found = blocks()
    assert len(found) >= 6, f"only {len(found)} python blocks in {DOC} and the README"
    srv = serve()
    fake = FakeOpenAI()
    # The snippets use fixed session names: a fresh user keeps reruns apart.
    env = {**os.environ, "REMSTORE_URL": srv.url, "REMSTORE_API_KEY": srv.key, "REMSTORE_USER_ID": unique("doc"),
           "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-fake", "OPENAI_AGENTS_DISABLE_TRACING": "1"}
    try:
        for i, code in enumerate(found):
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                               cwd=tmp_path, timeout=120)
            assert p.returncode == 0, f"python block {i + 1} failed:\n{code}\n{p.stderr}"
            for claim in re.findall(r"# → (.*)$", code, flags=re.M):
                assert claim.strip() in p.stdout, f"block {i + 1}: {claim!r} not in its output:\n{p.stdout}"
    finally:
        fake.close()
    # The model was sent the history remstore kept: a second turn carries the
    # first turn's question and answer (3 items or more, system prompt aside).
    sent = [len(b.get("messages") or b.get("input") or []) for _, b in fake.requests]
    assert len(sent) == 8 and max(sent) >= 3, sent
