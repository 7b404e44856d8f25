"""Prints the peer suite's matrix (.test-output/peer-matrix.json) as the
Markdown table of docs/interop.md: python3 interop/peer/matrix.py"""
import json
import pathlib

COLS = [
    ("load dicts equal", "loads equal"),
    ("remstore keys resolved by remstore", "remstore keys → remstore"),
    ("peer keys resolved by remstore", "peer keys → remstore"),
    ("remstore keys resolved by the peer", "remstore keys → peer"),
    ("peer keys shadowed by a stored key (SPEC §4 order)", "peer keys shadowed"),
    ("peer keys the peer resolves wrongly", "peer keys wrong in the peer"),
    ("remstore pydantic-ai valid", "ours valid"),
    ("pydantic-ai parts equal", "parts equal"),
    ("pydantic-ai parts equal but a stored call's arguments (documented)", "equal but a stored call's arguments"),
    ("pydantic-ai differs as SPEC §5 says", "differs per §5"),
    ("peer pydantic-ai invalid (ours valid)", "peer's invalid"),
]

m = json.loads((pathlib.Path(__file__).resolve().parents[2] / ".test-output" / "peer-matrix.json").read_text())
rows, dbs = {}, set()
for key, cell in m.items():
    db, direction, shape = key.split(" / ")
    dbs.add(db)
    r = rows.setdefault((direction, shape), dict.fromkeys((c for c, _ in COLS), 0))
    for c, _ in COLS:
        r[c] += cell.get(c, 0)
print(f"Databases: {', '.join(sorted(dbs))} (each row sums both); {len(m)} cases.\n")
print("| direction | shape | " + " | ".join(h for _, h in COLS) + " |")
print("|---|---|" + "---:|" * len(COLS))
tot = dict.fromkeys((c for c, _ in COLS), 0)
for (d, s), r in sorted(rows.items()):
    if not any(r.values()):
        continue  # counted below
    print(f"| {d} | {s} | " + " | ".join(str(r[c]) for c, _ in COLS) + " |")
    for c, _ in COLS:
        tot[c] += r[c]
print("| **all** | | " + " | ".join(f"**{tot[c]}**" for c, _ in COLS) + " |")

# Cases counted in other terms (the writers of issue 25, mixed writers, the
# tenant guard), summed over both databases.
other: dict = {}
for key, cell in m.items():
    _, direction, shape = key.split(" / ")
    for what, n in cell.items():
        if what not in dict(COLS):
            other[(direction, shape, what)] = other.get((direction, shape, what), 0) + n
if other:
    print()
    for (d, s, what), n in sorted(other.items()):
        print(f"- {d} / {s}: {what}: {n}")
