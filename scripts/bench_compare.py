#!/usr/bin/env python3
"""Print two `remstore bench --json` runs side by side as a Markdown table.

    scripts/bench_compare.py single.json citus.json

The ratio is the second run's median over the first's (above 1: slower),
beside each run's ratio to its own native-pgx floor on the same database.
"""
import json
import sys


def load(path: str) -> dict:
    data = json.load(open(path))
    return data if isinstance(data, dict) else {"workloads": data}  # runs from before the scale parts


def main(a_path: str, b_path: str) -> None:
    da, db = load(a_path), load(b_path)
    a = {r["name"]: r for r in da["workloads"]}
    b = {r["name"]: r for r in db["workloads"]}
    print("| workload | single-node ms | Citus ms | Citus / single | floor ratio single | floor ratio Citus |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, x in a.items():
        y = b.get(name)
        if y is None:
            continue
        fa = f'{x["ratio_to_floor"]:.2f}' if x.get("ratio_to_floor") else "-"
        fb = f'{y["ratio_to_floor"]:.2f}' if y.get("ratio_to_floor") else "-"
        print(f'| {name} | {x["median_ms"]:.3f} | {y["median_ms"]:.3f} | {y["median_ms"] / x["median_ms"]:.2f} | {fa} | {fb} |')
    ca = {r["name"]: r for r in da.get("concurrency") or []}
    cb = {r["name"]: r for r in db.get("concurrency") or []}
    if ca and cb:
        print()
        print("| concurrency (4-message turns) | single-node turns/s | Citus turns/s | Citus / single | p99 ms single | p99 ms Citus |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, x in ca.items():
            y = cb.get(name)
            if y:
                print(f'| {name} | {x["turns_per_sec"]:,.0f} | {y["turns_per_sec"]:,.0f} | {y["turns_per_sec"] / x["turns_per_sec"]:.2f} | {x["p99_ms"]:.1f} | {y["p99_ms"]:.1f} |')


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
