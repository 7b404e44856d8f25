"""The Python client (python/, `pip install ./python`) against a real
`remstore serve` on PostgreSQL: every call the API has, sync and async, its
errors as typed exceptions, and the retry policy."""
import asyncio
import json

import httpx
import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

import remstore
from conftest import unique

LONG = "The long answer. " * 60  # 1,020 code points: cut at T=200


def turn():
    return [
        {"role": "user", "content": "Find flights to Lisbon"},
        {"role": "assistant", "content": LONG},
        {"role": "tool", "content": '{"flights": 3}', "tool_name": "search_flights", "tool_call_id": "call_1",
         "tool_arguments": {"to": "LIS"}},
    ]


def test_sync_calls(serve):
    srv = serve()
    sid, alice, bob = unique("chat"), unique("alice"), unique("bob")
    with srv.client(alice) as c, srv.client(bob) as b:
        assert c.ready()
        res = c.store(sid, turn())
        assert res["stored"] == 3 and len(res["keys"]) == 3
        got = c.load(sid)
        assert [m["role"] for m in got] == ["user", "assistant", "tool"]
        cut = got[1]
        assert cut["_compressed"] and cut["_original_length"] == len(LONG)
        assert f"REM LOOKUP {cut['_entity_key']}" in cut["content"]
        assert c.lookup(cut["_entity_key"]) == LONG
        assert c.lookup(f"REM LOOKUP {cut['_entity_key']}") == LONG
        assert c.load(sid, compress=False)[1]["content"] == LONG
        assert c.load(sid, extras=True)[2]["tool_arguments"] == {"to": "LIS"}

        # Another user sees none of it.
        assert b.load(sid) == []
        with pytest.raises(remstore.NotFound) as e:
            b.lookup(cut["_entity_key"])
        assert e.value.status == 404 and e.value.code

        # pydantic-ai: validated by pydantic-ai itself.
        hist = c.load_pydantic_ai(sid, system_prompt="You are a travel agent.")
        assert isinstance(hist[0], ModelRequest) and hist[0].parts[0].content == "You are a travel agent."

        page = c.list_sessions(limit=5)
        assert sid in [s["name"] for s in page["sessions"]]
        assert c.get_session(sid)["session"]["name"] == sid
        assert c.update_session(sid, agent_name="travel")["agent_name"] == "travel"
        assert c.list_sessions(agent="travel")["sessions"][0]["name"] == sid

        fk = unique("fork")
        assert c.fork(sid, up_to=2, new_session_id=fk)["name"] == fk
        assert len(c.load(fk)) == 2

        popped = c.pop_message(sid)
        assert popped["role"] == "tool" and popped["tool_name"] == "search_flights"
        assert len(c.load(sid)) == 2
        assert c.clear_messages(sid) == 2 and c.load(sid) == []
        assert c.pop_message(sid) is None

        assert c.set_status(fk, "completed")["status"] == "completed"
        with pytest.raises(remstore.Conflict):
            c.store(fk, [{"role": "user", "content": "more"}])
        cx = unique("cancel")
        c.store(cx, [{"role": "user", "content": "start"}])
        assert c.cancel(cx, reason="user left")["status"] == "cancelled"
        c.delete_session(cx)
        with pytest.raises(remstore.NotFound):
            c.get_session(cx)


def test_idempotency_key_makes_a_resend_harmless(serve):
    srv = serve()
    sid = unique("idem")
    with srv.client(unique("u")) as c:
        assert c.store(sid, turn(), idempotency_key="req-1")["stored"] == 3
        again = c.store(sid, turn(), idempotency_key="req-1")
        assert again["stored"] == 0 and len(again["keys"]) == 3
        msgs = [ModelRequest(parts=[UserPromptPart(content="hi")]), ModelResponse(parts=[TextPart(content="hello")])]
        assert c.store_pydantic_ai(sid, msgs, idempotency_key="req-2")["stored"] == 2
        assert c.store_pydantic_ai(sid, ModelMessagesTypeAdapter.dump_json(msgs), idempotency_key="req-2")["stored"] == 0
        assert len(c.load(sid)) == 5


def test_errors_carry_the_api_body(serve):
    srv = serve("--max-body", "4096")
    sid = unique("err")
    with srv.client(unique("u")) as c:
        with pytest.raises(remstore.BadRequest) as e:
            c.store(sid, [{"role": "user", "content": "ok"}, {"role": "user", "content": "a\x00b"}])
        assert e.value.status == 400 and e.value.field == "messages[1].content"
        assert e.value.body["error"]["field"] == "messages[1].content"
        with pytest.raises(remstore.BadRequest) as e:
            c.store_pydantic_ai(sid, b'[{"kind":"response","parts":[{"part_kind":"hologram"}]}]')
        assert "hologram" in e.value.message and e.value.field == "messages[0].parts[0]"
        with pytest.raises(remstore.BadRequest) as e:
            c.store(sid, [{"role": "user", "content": "\ud800"}])  # a lone surrogate: refused, named
        assert e.value.field == "messages[0].content"
        with pytest.raises(remstore.PayloadTooLarge) as e:
            c.store(sid, [{"role": "user", "content": "x" * 5000}])
        assert e.value.status == 413
        assert c.load(sid) == []  # nothing of it stored
        with pytest.raises(remstore.NotFound):
            c.fork(unique("missing"))
    with remstore.Client(srv.url, api_key="wrong-key-0000000000") as bad:
        with pytest.raises(remstore.Unauthorized) as e:
            bad.load(sid)
        assert e.value.status == 401


def test_environment_configures_the_client(serve, monkeypatch):
    srv = serve()
    monkeypatch.setenv("REMSTORE_URL", srv.url)
    monkeypatch.setenv("REMSTORE_API_KEY", srv.key)
    monkeypatch.setenv("REMSTORE_USER_ID", "env-user")
    sid = unique("env")
    with remstore.Client() as c:
        c.store(sid, [{"role": "user", "content": "from env"}])
    with srv.client("env-user") as c:
        assert c.load(sid)[0]["content"] == "from env"
    with pytest.raises(ValueError):
        remstore.Client("ftp://x")


def test_async_client(serve):
    srv = serve()
    sid = unique("async")

    async def main():
        async with srv.async_client(unique("u")) as c:
            assert (await c.store(sid, turn()))["stored"] == 3
            got = await c.load(sid)
            assert await c.lookup(got[1]["_entity_key"]) == LONG
            hist = await c.load_pydantic_ai(sid)
            # The same history the sync client loads, and the shape the turn makes:
            # the question, the answer with the synthesized call, the tool's return.
            with srv.client(c.settings.user_id) as sync:
                assert ModelMessagesTypeAdapter.dump_json(hist) == ModelMessagesTypeAdapter.dump_json(
                    sync.load_pydantic_ai(sid))
            assert [m.kind for m in hist] == ["request", "response", "request"]
            assert [p.part_kind for p in hist[1].parts] == ["tool-call", "text"]
            # Concurrent calls on one client.
            loads = await asyncio.gather(*(c.load(sid) for _ in range(8)))
            assert all(x == got for x in loads)
            assert (await c.pop_message(sid))["role"] == "tool"
            assert await c.clear_messages(sid) == 2
            assert (await c.get_session(sid))["messages"] == []

    asyncio.run(main())


# --- the retry policy: which answers are sent again, how often, how fast ---

class Script:
    """A transport answering from a script, counting requests (the policy's
    unit test; storage behaviour is tested against serve above)."""

    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        a = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(a, Exception):
            raise a
        status, body = a
        return httpx.Response(status, json=body)


ERR503 = (503, {"error": {"code": "unavailable", "message": "storage is unavailable"}})


@pytest.mark.parametrize("answers,call,want,tries", [
    # 503 then success: retried.
    ((ERR503, ERR503, (200, [])), "load", None, 3),
    # 503 for ever: max_retries + 1 tries, then Unavailable.
    ((ERR503,), "load", remstore.Unavailable, 4),
    # 4xx: never retried.
    (((400, {"error": {"code": "bad_input", "message": "no", "field": "role"}}),), "load", remstore.BadRequest, 1),
    (((429, {"error": {"code": "too_many_requests", "message": "busy"}}),), "load", remstore.TooManyRequests, 1),
    (((404, {"error": {"code": "not_found", "message": "no"}}),), "pop", remstore.NotFound, 1),
    # A broken connection: a read is sent again, a pop (it may have acted) is not.
    ((httpx.ReadError("reset"), (200, [])), "load", None, 2),
    ((httpx.ReadError("reset"), (200, {"message": None})), "pop", remstore.ConnectionFailed, 1),
    # Connecting failed: nothing reached the server, so even a pop is retried.
    ((httpx.ConnectError("refused"), (200, {"message": None})), "pop", None, 2),
    # A store carries an Idempotency-Key, the same on every try: safe to resend.
    ((ERR503, httpx.ReadError("reset"), (201, {"session_id": "x", "stored": 1, "keys": ["k"]})), "store", None, 3),
    # A 503 on a pop is not retried either: the pop may have happened.
    ((ERR503,), "pop", remstore.Unavailable, 1),
])
def test_retry_policy(answers, call, want, tries):
    script = Script(*answers)
    c = remstore.Client("http://remstore.invalid", api_key="k", max_retries=3, backoff=0.001, max_backoff=0.01,
                        transport=httpx.MockTransport(script))
    run = {"load": lambda: c.load("s"), "pop": lambda: c.pop_message("s"),
           "store": lambda: c.store("s", [{"role": "user", "content": "x"}])}[call]
    if want is None:
        run()
    else:
        with pytest.raises(want):
            run()
    assert len(script.requests) == tries
    keys = {r.headers.get("Idempotency-Key") for r in script.requests}
    assert len(keys) == 1, "every try of one call sends the same Idempotency-Key"
    assert all(r.headers["Authorization"] == "Bearer k" for r in script.requests)


def test_backoff_is_bounded():
    s = remstore.Client("http://x", backoff=0.25, max_backoff=4.0).settings
    delays = [s.delay(i, None) for i in range(10)]
    assert all(0 < d <= 4.0 for d in delays)
    assert 0.125 <= delays[0] <= 0.25 and delays[-1] >= 2.0
    assert s.delay(0, 60) == 4.0, "a Retry-After is honoured up to max_backoff"


def test_unreachable_server_fails_after_its_retries():
    with remstore.Client("http://127.0.0.1:9", max_retries=2, backoff=0.01, max_backoff=0.02, timeout=2) as c:
        with pytest.raises(remstore.ConnectionFailed) as e:
            c.load("s")
    assert "3 tries" in str(e.value) and e.value.status is None
    assert "remstore serve" in str(e.value) and "REMSTORE_URL" in str(e.value), "a connection failure says what to start"


def test_typed_package():
    import importlib.resources
    assert importlib.resources.files("remstore").joinpath("py.typed").is_file()
    missing = [n for n in remstore.__all__ if not hasattr(remstore, n)]
    assert not missing, f"__all__ names what the package does not have: {missing}"
    assert {"Client", "AsyncClient", "RemstoreError", "History"} <= set(remstore.__all__)


def test_sync_and_async_clients_agree():
    """The two clients are written by hand: every public method of one is in the other with the
    same parameters, defaults and annotations (the async one's return value awaited), and the
    same docstring."""
    import inspect
    def public(cls):
        return {n: f for n, f in vars(cls).items() if callable(f) and not n.startswith("_")}
    sync, async_ = public(remstore.Client), public(remstore.AsyncClient)
    assert set(sync) - {"close"} == set(async_) - {"aclose"}, (set(sync) ^ set(async_))
    for name, f in sync.items():
        if name == "close":
            continue
        g = async_[name]
        assert inspect.iscoroutinefunction(g), name
        assert inspect.signature(f) == inspect.signature(g), (name, inspect.signature(f), inspect.signature(g))
        assert f.__doc__ and f.__doc__ == g.__doc__, name


def test_ready_answers_false_when_storage_is_down():
    import httpx
    def handler(request):
        return httpx.Response(503 if request.url.path == "/readyz" else 404, json={"status": "unavailable"})
    with remstore.Client("http://remstore.test", transport=httpx.MockTransport(handler), max_retries=3) as c:
        assert c.ready() is False
    ok = httpx.MockTransport(lambda r: httpx.Response(200, json={"status": "ready"}))
    with remstore.Client("http://remstore.test", transport=ok) as c:
        assert c.ready() is True


def test_refusals_and_unmapped_rows(serve):
    """What the store would lose is refused (BadRequest naming the near role); a row the
    peer wrote with a role of its own is left out of pydantic-ai history with an
    UnmappedWarning, or with strict=True refused."""
    import uuid as uuidlib

    from conftest import run

    srv = serve()
    sid, alice = unique("chat"), unique("alice")
    with srv.client(alice) as c:
        with pytest.raises(remstore.BadRequest) as e:
            c.store(sid, [{"role": "USER", "content": "hi"}])
        assert 'did you mean \\"user\\"?' in str(e.value) or 'did you mean "user"?' in str(e.value)
        c.store(sid, turn())
        # A row with a role of the peer's, restored the way an operator would.
        db = srv.db
        lines = run(["export", "--db", db, "--user-id", alice, "--session-id", sid]).stdout.decode().splitlines()
        row = json.loads([ln for ln in lines if '"kind":"message"' in ln][-1])
        row.update(id=str(uuidlib.uuid4()), role="critic", content="beep",
                   created_at="2099-01-01T00:00:00Z", updated_at="2099-01-01T00:00:00Z")
        run(["import", "-", "--db", db, "--user-id", alice, "--any-role"], stdin=json.dumps(row).encode())
        assert [m["role"] for m in c.load(sid)][-1] == "critic"
        with pytest.warns(remstore.UnmappedWarning, match="1 stored message"):
            hist = c.load_pydantic_ai(sid)
        assert "beep" not in ModelMessagesTypeAdapter.dump_json(hist).decode()
        with pytest.raises(remstore.BadRequest, match="has no pydantic-ai form"):
            c.load_pydantic_ai(sid, strict=True)


def test_search(serve):
    """search finds the user's messages by words, tool name and key; another user's not;
    bad input is a BadRequest naming the field. The async client says the same."""
    srv = serve()
    sid, alice, bob = unique("chat"), unique("alice"), unique("bob")
    with srv.client(alice) as c:
        keys = c.store(sid, turn())["keys"]
        hits = c.search("LISBON flights")
        assert [h["role"] for h in hits] == ["user"] and hits[0]["session_name"] == sid
        assert [h["tool_name"] for h in c.search("FLIGHTS", in_="tool")] == ["search_flights"]
        by_key = c.search(f"REM LOOKUP {keys[1]}", in_="key")
        assert by_key[0]["index"] == 1 and by_key[0]["key"] == keys[1]
        with pytest.raises(remstore.BadRequest, match="in"):
            c.search("x", in_="everything")
        # Narrowed and paged (issue 41): the role, the session, a window.
        assert [h["role"] for h in c.search("lisbon", role="user", session=sid, after="2000-01-01T00:00:00Z")] == ["user"]
        assert c.search("lisbon", role="tool") == [] and c.search("lisbon", session=unique("other")) == []
        assert c.search("lisbon", offset=1) == []
        with pytest.raises(remstore.BadRequest, match="role"):
            c.search("x", role="robot")
    with srv.client(bob) as c:
        assert c.search("lisbon") == []

    async def main():
        async with srv.async_client(alice) as c:
            return await c.search("long answer")

    assert [h["role"] for h in asyncio.run(main())] == ["assistant"]
