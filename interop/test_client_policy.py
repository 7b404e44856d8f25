"""The Python client's retry and resend policy against the table the Go
client's tests read too (fixtures/client/retry_policy.json): the two
clients cannot drift apart."""
import json

import httpx
import pytest

from remstore import _calls as c
from conftest import FIXTURES

POLICY = json.loads((FIXTURES / "client" / "retry_policy.json").read_text())

CALLS = {
    "store": lambda: c.store("s", [{"role": "user", "content": "x"}], None),
    "store_pydantic_ai": lambda: c.store_pydantic_ai("s", b"[]", None),
    "load": lambda: c.load("s", True, False, None),
    "load_pydantic_ai": lambda: c.load_pydantic_ai("s", None, True, None, None, None),
    "lookup": lambda: c.lookup("k"),
    "search": lambda: c.search("q", "content", None),
    "list_sessions": lambda: c.list_sessions(None, None, None, None, None, None, None, None, None),
    "get_session": lambda: c.get_session("s", True),
    "update_session": lambda: c.update_session("s", name="n"),
    "clear_messages": lambda: c.clear_messages("s"),
    "ready": lambda: c.health(),
    "fork": lambda: c.fork("s", None, None),
    "cancel": lambda: c.cancel("s", None),
    "delete_session": lambda: c.delete_session("s", False),
    "pop_message": lambda: c.pop_message("s"),
}


def settings(max_retries=POLICY["max_retries"], backoff=0.25, max_backoff=4.0):
    return c.Settings("http://127.0.0.1:1", None, None, 30.0, max_retries, backoff, max_backoff,
                      POLICY["store_window"])


def test_default_store_window_is_the_tables():
    assert c.Settings.resolve(None, None, None, 30.0, 3, 0.25, 4.0).store_window == POLICY["store_window"]


def test_every_call_is_in_the_table():
    assert set(CALLS) == set(POLICY["safety"])
    for name, make in CALLS.items():
        assert make().safety == POLICY["safety"][name], name


def outcome(kind: str):
    req = httpx.Request("GET", "http://127.0.0.1:1/x")
    if kind == "connect_error":
        return httpx.ConnectError("refused", request=req)
    if kind == "read_error":
        return httpx.ReadError("reset", request=req)
    return httpx.Response(int(kind), request=req, json={"error": {"code": "x", "message": "y"}})


@pytest.mark.parametrize("case", POLICY["cases"], ids=lambda k: f"{k['safety']}-{k['outcome']}-{k['attempt']}")
def test_decide_follows_the_table(case):
    call = c.Call("GET", "/x", lambda r: "ok", safety=case["safety"])
    what, _ = call.decide(settings(), case["attempt"], outcome(case["outcome"]), case.get("elapsed", 0.0))
    assert {"return": "return", "raise": "raise", "sleep": "retry"}[what] == case["decision"]


@pytest.mark.parametrize("d", POLICY["delays"], ids=lambda d: f"{d['attempt']}-{d['retry_after']}")
def test_delays_follow_the_table(d):
    s = settings(backoff=d["backoff"], max_backoff=d["max_backoff"])
    for _ in range(50):
        assert d["min"] <= s.delay(d["attempt"], d["retry_after"]) <= d["max"]
