#!/usr/bin/env python3
"""Print two `remstore bench --json` runs side by side as a Markdown table.

    scripts/bench_compare.py single.json citus.json

The ratio is the second run's median over the first's (above 1: slower),
beside each run's ratio to its own native-pgx floor on the same database.
"""
import json
import sys


def main(a_path: str, b_path: str) -> None:
    a = {r["name"]: r for r in json.load(open(a_path))}
    b = {r["name"]: r for r in json.load(open(b_path))}
    print("| workload | single-node ms | Citus ms | Citus / single | floor ratio single | floor ratio Citus |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, x in a.items():
        y = b.get(name)
        if y is None:
            continue
        fa = f'{x["ratio_to_floor"]:.2f}' if x.get("ratio_to_floor") else "-"
        fb = f'{y["ratio_to_floor"]:.2f}' if y.get("ratio_to_floor") else "-"
        print(f'| {name} | {x["median_ms"]:.3f} | {y["median_ms"]:.3f} | {y["median_ms"] / x["median_ms"]:.2f} | {fa} | {fb} |')


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
