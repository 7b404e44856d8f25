"""The peer's side of `remstore bench --peer`: its own session store, timed.

Reads JSON requests on stdin, one per line, and answers each with one line
{"ns": [durations]} (or {"error": ...}). Durations are measured here, around
the peer's own calls only, so the pipe to the Go side is not in them.

    {"op": "connect", "db": URL, "peer": PATH}
    {"op": "store", "sid": UUID, "user": U, "turn": [...], "n": N}
    {"op": "load", "sid": UUID, "user": U, "n": N}
    {"op": "convert", "sid": UUID, "user": U, "n": N}   # load + convert + dump_json
    {"op": "lookup", "key": K, "user": U, "n": N}
    {"op": "install"}   # the peer's own sql/install.sql on the connected database
    {"op": "concurrent", "sids": [UUID, ...], "user": U, "turn": [...], "seconds": S}
        # one writer per sid (the same sid repeated: one shared session), each
        # storing the turn again and again for S seconds on the peer's pool;
        # answers {"ns": [each turn], "elapsed_ns": the whole run}
"""
import asyncio
import json
import os
import random
import sys
import tempfile
import time

LOOP = asyncio.new_event_loop()
peer = {}


def connect(req):
    os.environ["POSTGRES__CONNECTION_STRING"] = req["db"]
    cwd = os.getcwd()
    empty = tempfile.mkdtemp(prefix="remstore-peer-bench-")
    os.chdir(empty)  # no .env of anyone's
    sys.path.insert(0, req["peer"])
    from loguru import logger
    logger.remove()
    import remlight.services.database as db
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from remlight.services.session.pydantic_messages import session_to_pydantic_messages
    from remlight.services.session.store import SessionMessageStore
    os.chdir(cwd)
    os.rmdir(empty)
    db._db = db.DatabaseService(req["db"])
    LOOP.run_until_complete(db._db.connect())
    peer.update(Store=SessionMessageStore, convert=session_to_pydantic_messages, TA=ModelMessagesTypeAdapter)
    return []


def timed(n, fn):
    out = []
    for _ in range(n):
        t = time.perf_counter_ns()
        LOOP.run_until_complete(fn())
        out.append(time.perf_counter_ns() - t)
    return out


def run(req):
    op, n = req["op"], req.get("n", 1)
    if op == "connect":
        return connect(req)
    if op == "install":
        import remlight.services.database as db
        LOOP.run_until_complete(db._db.install_schema())
        return []
    store = peer["Store"](user_id=req["user"])
    if op == "store":
        return timed(n, lambda: store.store_session_messages(req["sid"], req["turn"]))
    if op == "load":
        async def load():
            h = await store.load_session_messages(req["sid"], compress_on_load=True)
            assert h, "the peer loaded nothing"
        return timed(n, load)
    if op == "convert":
        async def convert():
            h = await store.load_session_messages(req["sid"], compress_on_load=True)
            peer["TA"].dump_json(peer["convert"](h, "You are a benchmark."))
        return timed(n, convert)
    if op == "lookup":
        # With "keys", each run looks up another one at random: on a table
        # without an index, PostgreSQL's synchronized scans would otherwise
        # start the next scan where the last one found the same key.
        keys = req.get("keys") or [req["key"]]

        async def lookup():
            assert await store.retrieve_message(random.choice(keys)) is not None, "the peer found nothing"
        return timed(n, lookup)
    if op == "concurrent":
        return concurrent(req)
    raise ValueError(f"unknown op {op}")


def concurrent(req):
    sids = req["sids"]
    stores = [peer["Store"](user_id=req["user"]) for _ in sids]
    lat = []

    async def writer(store, sid, deadline):
        while time.perf_counter() < deadline:
            t = time.perf_counter_ns()
            await store.store_session_messages(sid, req["turn"])
            lat.append(time.perf_counter_ns() - t)

    async def main():
        # Each session exists first: the peer's session creation is not
        # safe against itself (two writers creating one session race).
        for sid in dict.fromkeys(sids):
            await stores[0]._ensure_session_exists(sid, None)
        t = time.perf_counter_ns()
        deadline = time.perf_counter() + req["seconds"]
        await asyncio.gather(*(writer(st, sid, deadline) for st, sid in zip(stores, sids)))
        return time.perf_counter_ns() - t

    elapsed = LOOP.run_until_complete(main())
    return {"ns": lat, "elapsed_ns": elapsed}


for line in sys.stdin:
    try:
        res = run(json.loads(line))
        print(json.dumps(res if isinstance(res, dict) else {"ns": res}), flush=True)
    except Exception as e:  # noqa: BLE001 - reported to the Go side
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
