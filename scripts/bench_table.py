#!/usr/bin/env python3
"""Print a `remstore bench --json` file as the Markdown table docs/performance.md shows."""
import json
import sys

NAMES = {
    "store 4 messages": "store a 4-message turn",
    "store 100 messages": "store 100 messages",
    "load+compress+convert 1000": "load + compress + convert to pydantic-ai JSON 1,000",
}


def name(n):
    if n in NAMES:
        return NAMES[n]
    if n.startswith("load+compress ") and n.endswith(", history floor"):
        return f"load + compress {int(n.split()[1].rstrip(',')):,}, beside a floor that builds the history"
    if n.startswith("load+compress ") and n.split()[-1].isdigit():
        return "load + compress " + f"{int(n.split()[-1]):,}"
    if n.startswith("lookup in ") and n.endswith("peer schema"):
        return f"lookup, {int(n.split()[2]):,} rows; the Python service on its own install.sql schema"
    if n.startswith("lookup in "):
        return f"lookup, {int(n.split()[2]):,} rows in the table"
    if n.startswith("import "):
        return f"import {int(n.split()[1]):,} messages"
    if n.startswith("store turn into "):
        return f"store a 4-message turn into a session of {int(n.split()[-1]):,}"
    return n


def ms(v):
    if not v:
        return "–"
    return f"{v:,.3f}" if v < 10 else f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def workloads_table(rows):
    print("| workload | median ms | p95 ms | rows/s | floor ms | ratio to floor | the Python service, ms | remstore faster by | statements (remstore/floor/peer) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        st = r.get("statements") or {}
        stmts = "/".join("–" if st.get(k, -1) < 0 else str(st[k]) for k in ("Remstore", "Floor", "Peer"))
        rps = f"{r['rows_per_sec']:,.0f}" if r.get("rows_per_sec") and r["size"] > 1 and not r["name"].startswith("lookup") else "–"
        ratio = f"{r['ratio_to_floor']:.2f}" if r.get("ratio_to_floor") else "–"
        peer = f"**{r['peer_over_remstore']:.1f}x**" if r.get("peer_over_remstore") else "–"
        print(f"| {name(r['name'])} | {ms(r['median_ms'])} | {ms(r['p95_ms'])} | {rps} | {ms(r.get('floor_median_ms'))} | {ratio} | {ms(r.get('peer_median_ms'))} | {peer} | {stmts} |")
    # What each ratio divides by, once per floor (remstore bench prints the same under its table).
    floors = {}
    for r in rows:
        if r.get("floor") and r["floor"] not in floors:
            floors[r["floor"]] = r["name"]
    if floors:
        print()
        for f, n in floors.items():
            print(f"- floor of {name(n)} (and those like it): {f}")


def main(path):
    data = json.load(open(path))
    if isinstance(data, list):  # runs from before the scale parts
        data = {"workloads": data}
    rows = data.get("workloads") or []  # null in a run of --only concurrency,http
    if rows:
        workloads_table(rows)
    sweep = [r for r in rows if r["name"].startswith("store turn into ")]
    if len(sweep) >= 2:
        print()
        print(f"Session-size sweep: a turn into {sweep[-1]['size']:,} messages over a turn into {sweep[0]['size']:,}: "
              f"**{sweep[-1]['median_ms'] / sweep[0]['median_ms']:.2f}**.")
    if data.get("concurrency"):
        print()
        print("| concurrency (4-message turns) | turns | turns/s | p50 ms | p99 ms | the Python service, turns/s | peer p50 ms | peer p99 ms | remstore / peer | rows the Python service acknowledged but lost |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in data["concurrency"]:
            peer = c.get("peer_turns_per_sec")
            print(f"| {c['name']} | {c['turns']:,} | {c['turns_per_sec']:,.0f} | {c['p50_ms']:.2f} | {c['p99_ms']:.2f} | "
                  + (f"{peer:,.0f} | {c['peer_p50_ms']:.2f} | {c['peer_p99_ms']:.2f} | **{c['remstore_over_peer']:.2f}x** | {c['peer_missing_rows']}" if peer else "– | – | – | – | –")
                  + " |")
    if data.get("http"):
        print()
        print("| through serve's HTTP API | clients | library ops/s | library p50 ms | bare net/http ops/s | bare p50 ms | serve ops/s | serve p50 ms | bare / library | serve / library | serve / bare |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for h in data["http"]:
            bare = h.get("bare_http_ops_per_sec")
            print(f"| {h['name']} | {h['clients']} | {h['library_ops_per_sec']:,.0f} | {h['library_p50_ms']:.2f} | "
                  + (f"{bare:,.0f} | {h['bare_http_p50_ms']:.2f} | " if bare else "– | – | ")
                  + f"{h['http_ops_per_sec']:,.0f} | {h['http_p50_ms']:.2f} | "
                  + (f"{100 * h['bare_http_over_library']:.0f}% | " if bare else "– | ")
                  + f"**{100 * h['http_over_library']:.0f}%** | "
                  + (f"{100 * h['http_over_bare_http']:.0f}% |" if bare else "– |"))

    if data.get("targets"):
        print()
        print("| target | goal | measured | met | note |")
        print("|---|---|---:|---|---|")
        for t in data["targets"]:
            met = "not measured" if t.get("met") is None else ("**yes**" if t["met"] else "no")
            print(f"| {t['name']} | {t['goal']} | {t['measured']} | {met} | {t.get('note', '')} |")


if __name__ == "__main__":
    main(sys.argv[1])
