"""RemstoreSession.get_items(limit) beside the Agents SDK's own SQLiteSession
on a session of 1,000 items: medians of each, and their ratio, measured in one
run (make bench-python). A benchmark, not a test: nothing here asserts a time.

    REMSTORE_BIN=.test-output/remstore REMSTORE_TEST_DATABASE_URL=postgres://... \\
        interop/.venv-2/bin/python interop/bench_get_items.py [--items 1000] [--iterations 200]
"""
import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from agents import SQLiteSession  # noqa: E402

from remstore.agents import RemstoreSession  # noqa: E402
from remstore_serve import Server  # noqa: E402


def items(n: int) -> list[dict]:
    out = []
    for i in range(n // 2):
        out.append({"role": "user", "content": f"question {i}"})
        out.append({"role": "assistant", "content": f"answer {i}: " + "words " * 40})
    return out


async def median_ms(fn, iterations: int) -> float:
    for _ in range(5):  # warm: connections, statement caches
        await fn()
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=200)
    a = ap.parse_args()
    db = os.environ.get("REMSTORE_TEST_DATABASE_URL") or str(Path(tempfile.mkdtemp()) / "bench.db")
    srv = Server(db)
    try:
        data = items(a.items)
        ref = SQLiteSession("bench", str(Path(tempfile.mkdtemp()) / "sdk.db"))
        await ref.add_items(data)
        async with srv.async_client(f"bench-{os.getpid()}") as client:
            ours = RemstoreSession(f"bench-items-{os.getpid()}", client)
            for i in range(0, len(data), 250):
                await ours.add_items(data[i:i + 250])
            print(f"get_items on a session of {a.items} items, {a.iterations} iterations, medians (ms):")
            print(f"{'call':<22} {'SQLiteSession':>14} {'RemstoreSession':>16} {'ratio':>7}")
            # The floor of any call through serve: one round trip of the same
            # httpx client to a route that reads nothing.
            rtt = await median_ms(lambda: client._http.get("/healthz"), a.iterations)
            print(f"{'httpx GET /healthz':<22} {'':>14} {rtt:>16.3f}")
            for limit in (2, 20, None):
                assert await ours.get_items(limit) == await ref.get_items(limit)
                theirs = await median_ms(lambda: ref.get_items(limit), a.iterations)
                mine = await median_ms(lambda: ours.get_items(limit), a.iterations)
                print(f"{'get_items(' + str(limit) + ')':<22} {theirs:>14.3f} {mine:>16.3f} {mine / theirs:>7.2f}")
    finally:
        srv.stop()


if __name__ == "__main__":
    asyncio.run(main())
