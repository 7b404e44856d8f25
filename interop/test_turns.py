"""A turn that cannot be interleaved, lost or over-loaded, through the Python
client against `remstore serve`: guarded stores (run_turn, Runner.run, the
client itself), stores that ride out an outage and, past their window, come
back as `pending` to store once later, and bounded loads (last_n) with tool
pairs whole. Under both pydantic-ai versions."""
import asyncio
import threading
import time

import pytest
from agents import Runner
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import remstore
from agents_app import FakeModel, make_agent
from conftest import unique
from remstore.agents import RemstoreSession, lookup_tool
from remstore.pydantic_ai import last_turns, run_turn, run_turn_sync
from remstore_serve import Server


def text_model(answer: str, gate: asyncio.Event | None = None) -> FunctionModel:
    async def fn(messages, info: AgentInfo) -> ModelResponse:
        if gate is not None:
            await gate.wait()
        return ModelResponse(parts=[TextPart(answer)])
    return FunctionModel(fn)


def contents(rows):
    return [r["content"] for r in rows]


def test_racing_run_turns_conflict_instead_of_interleaving(serve):
    """Four run_turn calls racing from one history: one stores, three raise
    SessionMoved naming the session's last message; nothing interleaves."""
    srv = serve()

    async def main():
        async with srv.async_client(unique("u")) as client:
            session = unique("race")
            await run_turn(Agent(text_model("first"), system_prompt="be brief"), client, session, "hello")
            gate = asyncio.Event()
            agents = [Agent(text_model(f"answer {i}", gate), system_prompt="be brief") for i in range(4)]
            tasks = [asyncio.create_task(run_turn(a, client, session, f"prompt {i}")) for i, a in enumerate(agents)]
            await asyncio.sleep(0.5)  # every turn has loaded and waits for its model
            gate.set()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            won = [i for i, r in enumerate(results) if not isinstance(r, BaseException)]
            moved = [r for r in results if isinstance(r, remstore.SessionMoved)]
            assert len(won) == 1 and len(moved) == 3, results
            rows = await client.load(session)
            assert contents(rows) == ["be brief", "hello", "first", f"prompt {won[0]}", f"answer {won[0]}"]
            assert all(m.last == rows.last and m.status == 409 and m.field == "expect_last" for m in moved), [(m.last, m.status, m.field, rows.last) for m in moved]
            assert all(m.request_id and m.url == srv.url for m in moved)
            # The recipe: store the lost turn's messages on top of what is there.
            h = await client.load_pydantic_ai(session)
            assert h.last == rows.last

    asyncio.run(main())


def test_racing_runner_runs_conflict(serve):
    """Two Runner.run on one RemstoreSession: the second to store raises
    SessionMoved; the session holds whole turns only."""
    srv = serve()

    async def main():
        async with srv.async_client(unique("u")) as client:
            session = RemstoreSession(unique("agents-race"), client)
            await Runner.run(make_agent(FakeModel()), "Thanks, that is all", session=session)
            gate = asyncio.Event()

            class Slow(FakeModel):
                async def get_response(self, *a, **kw):
                    await gate.wait()
                    return await super().get_response(*a, **kw)

            tasks = [asyncio.create_task(Runner.run(make_agent(Slow()), f"Thanks {i}", session=session)) for i in range(2)]
            await asyncio.sleep(0.5)
            gate.set()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            assert len(errors) == 1 and isinstance(errors[0], remstore.SessionMoved), results
            won = next(i for i, r in enumerate(results) if not isinstance(r, BaseException))
            rows = await client.load(session.session_id)
            # The winner's turn is whole at the end; the loser stored no answer
            # (its prompt may stand before it when the winner loaded after it:
            # the winner's model saw it, so its turn is built on it).
            assert [r["role"] for r in rows[-2:]] == ["user", "assistant"] and rows[-2]["content"] == f"Thanks {won}"
            assert [r["role"] for r in rows].count("assistant") == 2, rows

    asyncio.run(main())


def test_guarded_client_store(serve):
    srv = serve()
    with srv.client(unique("u")) as client:
        session = unique("g")
        h = client.load(session)
        assert h == [] and h.last == remstore.EMPTY
        res = client.store(session, [{"role": "user", "content": "q"}], expect_last=h.last)
        assert res["last"] and res["last"] != remstore.EMPTY
        with pytest.raises(remstore.SessionMoved) as e:
            client.store(session, [{"role": "user", "content": "racing"}], expect_last=h.last)
        assert e.value.last == res["last"] and e.value.request_id and e.value.url == srv.url
        client.store(session, [{"role": "user", "content": "on top"}], expect_last=e.value.last)
        assert contents(client.load(session)) == ["q", "on top"]
        with pytest.raises(ValueError):
            client.store(session, [{"role": "user", "content": "x"}], expect_last="")
        with pytest.raises(remstore.BadRequest) as bad:
            client.store(session, [{"role": "user", "content": "x"}], expect_last="msg-1")
        assert bad.value.field == "expect_last" and bad.value.request_id


def restart_later(srv: Server, after: float) -> threading.Thread:
    """Stops srv now and starts serve again on its address after `after` s."""
    host_port = srv.url.split("//")[1]
    srv.stop()
    box = {}

    def again():
        time.sleep(after)
        back = Server(srv.db, {"REMSTORE_API_KEYS": srv.key}, ("--addr", host_port))
        back.key = srv.key
        box["srv"] = back

    t = threading.Thread(target=again)
    t.start()
    t.box = box
    return t


def test_a_paid_run_survives_a_10s_outage(serve):
    """serve goes down for 10 s while the model runs: run_turn_sync completes
    with the client's defaults, each message stored once."""
    srv = serve()
    client = srv.client(unique("u"))
    session = unique("outage")
    holder = {}

    def model(messages, info: AgentInfo) -> ModelResponse:
        holder["t"] = restart_later(srv, 10)
        return ModelResponse(parts=[TextPart("a paid answer")])

    start = time.monotonic()
    try:
        result = run_turn_sync(Agent(FunctionModel(model)), client, session, "q")
    finally:
        holder["t"].join()
        back = holder["t"].box.get("srv")
    try:
        assert time.monotonic() - start >= 10
        assert result.output == "a paid answer"
        assert contents(client.load(session)) == ["q", "a paid answer"]
    finally:
        client.close()
        if back:
            back.stop()


def test_past_the_window_the_messages_come_back(serve):
    """Past store_window the exception carries the run's messages; storing
    them later stores them once, however often."""
    srv = serve()
    user = unique("u")
    session = unique("later")
    short = srv.client(user, store_window=1.0, backoff=0.05)
    holder = {}

    def model(messages, info: AgentInfo) -> ModelResponse:
        holder["t"] = restart_later(srv, 3)
        return ModelResponse(parts=[TextPart("kept for later")])

    try:
        with pytest.raises(remstore.ConnectionFailed) as e:
            run_turn_sync(Agent(FunctionModel(model)), short, session, "q")
    finally:
        holder["t"].join()
    back = holder["t"].box["srv"]
    try:
        err = e.value
        assert err.pending is not None and err.request_id and err.url == srv.url
        assert [p["parts"][0]["content"] for p in err.pending.messages] == ["q", "kept for later"]
        with back.client(user) as client:
            first = client.store_pending(err.pending)
            again = client.store_pending(err.pending)
            assert first["stored"] == 2 and again["stored"] == 0 and again["keys"] == first["keys"]
            assert contents(client.load(session)) == ["q", "kept for later"]
    finally:
        short.close()
        back.stop()


def test_last_n_keeps_tool_pairs_whole(serve):
    """load(last_n=N) is the full load's last N with a leading tool result
    (its call cut off) left out, for every N."""
    srv = serve()
    with srv.client(unique("u")) as client:
        session = unique("window")
        rows = []
        for i in range(6):
            rows += [{"role": "user", "content": f"q{i}"},
                     {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "name": "f", "arguments": "{}"}]},
                     {"role": "tool", "content": f"r{i}", "tool_call_id": f"c{i}", "tool_name": "f"},
                     {"role": "assistant", "content": f"a{i}"}]
        client.store(session, rows)
        full = client.load(session, extras=True)
        for n in range(1, len(full) + 3):
            want = full[-n:]
            while want and want[0]["role"] == "tool":
                want = want[1:]
            got = client.load(session, extras=True, last_n=n)
            assert got == want and got.last == full.last, n
        h = client.load_pydantic_ai(session, last_n=3)
        assert isinstance(h[0], ModelResponse) and isinstance(h[0].parts[0], ToolCallPart)


def test_history_turns_and_a_given_system_prompt(serve):
    srv = serve()
    with srv.client(unique("u")) as client:
        session = unique("turns")
        for i in range(3):
            run_turn_sync(Agent(text_model(f"a{i}"), system_prompt="stored prompt"), client, session, f"q{i}")
        seen = {}

        def model(messages, info):
            seen["messages"] = messages
            return ModelResponse(parts=[TextPart("done")])

        run_turn_sync(Agent(FunctionModel(model)), client, session, "q3", history_turns=1, system_prompt="given")
        sent = ModelMessagesTypeAdapter.dump_python(seen["messages"])
        kinds = [p["part_kind"] for m in sent for p in m["parts"]]
        texts = [p.get("content") for m in sent for p in m["parts"]]
        # One system prompt, the one given; of the history only its last turn.
        assert kinds.count("system-prompt") == 0 and "stored prompt" not in texts, texts
        assert texts[:3] == ["q2", "a2", "q3"], texts
        h = client.load_pydantic_ai(session, system_prompt="given")
        prompts = [p.content for m in h if isinstance(m, ModelRequest) for p in m.parts if p.part_kind == "system-prompt"]
        assert prompts == ["given"]
        assert len(last_turns(h, 2)) == 4


def test_output_retry_is_stored_with_its_text(serve):
    """An output validator's retry (pydantic-ai's own feedback to the model):
    a plain load shows its text; a pydantic-ai load gives back what the run
    produced."""
    srv = serve()
    with srv.client(unique("u")) as client:
        session = unique("retry")
        calls = {"n": 0}

        def model(messages, info):
            calls["n"] += 1
            return ModelResponse(parts=[TextPart("not a number" if calls["n"] == 1 else "42")])

        try:
            agent = Agent(FunctionModel(model), output_retries=2)
        except TypeError:  # pydantic-ai 1.42
            agent = Agent(FunctionModel(model), retries=2)

        @agent.output_validator
        def must_be_a_number(out: str) -> str:
            if not out.isdigit():
                raise ModelRetry("the answer must be a number")
            return out

        result = run_turn_sync(agent, client, session, "how many?")
        assert result.output == "42"
        rows = client.load(session)
        assert any(r["role"] == "user" and "the answer must be a number" in r["content"] for r in rows), rows
        back = client.load_pydantic_ai(session)
        assert ModelMessagesTypeAdapter.dump_json(back) == ModelMessagesTypeAdapter.dump_json(result.all_messages())


def test_session_refuses_a_sync_client_and_offers_the_lookup_tool(serve):
    srv = serve()
    with srv.client(unique("u")) as sync_client:
        with pytest.raises(TypeError, match="AsyncClient"):
            RemstoreSession("s", sync_client)  # type: ignore[arg-type]

    async def main():
        async with srv.async_client(unique("u")) as client:
            session = RemstoreSession(unique("limit"), client)
            await Runner.run(make_agent(FakeModel()), "What is 2 + 3?", session=session)
            items = await session.get_items()
            for n in range(1, len(items) + 2):
                got = await session.get_items(limit=n)
                assert got == items[-n:][-len(got):] and len(got) <= n
            tool = lookup_tool(client)
            assert tool.name == "rem_lookup" and "REM LOOKUP" in tool.description
            own = RemstoreSession(unique("own"))
            await own.aclose()
            assert own.client._http.is_closed

    asyncio.run(main())
