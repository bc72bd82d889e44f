"""Reads the JSON lines of bench/secagg/run.sh and prints two Markdown tables per configuration
(n, num_shares, threshold): CPU time (load-independent; the measure for the 50x goal) and the
wall-clock sums per call (inflated by the load of a shared machine), with Flower/dptune ratios."""

import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
by = {}
for r in rows:
    by.setdefault((r["n"], r["num_shares"], r["threshold"]), {})[r["impl"]] = r
keys = sorted(by, key=lambda k: (k[0], -k[1]))

print("CPU time per round (dptune: process CPU of the whole round; Flower: process_time summed"
      " over the timed calls)\n")
print("| n | num_shares | threshold | dptune clients + server | Flower clients | Flower server"
      " | Flower clients + server | ratio |")
print("|---|---|---|---|---|---|---|---|")
for k in keys:
    d = by[k].get("dptune")
    f = by[k].get("flower-1.42-secagg+")
    dc = d.get("round_cpu_seconds") if d else None
    fc = (f.get("client_cpu_seconds"), f.get("server_cpu_seconds")) if f else (None, None)
    cells = [str(x) for x in k]
    cells.append(f"{dc:.3f} s" if dc is not None else "-")
    cells += [f"{x:.2f} s" if x is not None else "-" for x in fc]
    ftot = fc[0] + fc[1] if None not in fc else None
    cells.append(f"{ftot:.2f} s" if ftot is not None else "-")
    cells.append(f"{ftot / dc:.0f}x" if ftot is not None and dc else "-")
    print("| " + " | ".join(cells) + " |")

print("\nWall-clock sums per call (grow with the machine's load)\n")
print("| n | num_shares | threshold | dptune clients (sum) | dptune server | Flower clients (sum)"
      " | Flower server | clients ratio | server ratio | total ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k in keys:
    d = by[k].get("dptune")
    f = by[k].get("flower-1.42-secagg+")
    cells = [str(x) for x in k]
    cells += [f"{d['client_seconds_total']:.3f} s", f"{d['server_seconds']:.4f} s"] if d else ["-", "-"]
    cells += [f"{f['client_seconds_total']:.2f} s", f"{f['server_seconds']:.3f} s"] if f else ["-", "-"]
    if d and f:
        dc, ds = d["client_seconds_total"], d["server_seconds"]
        fc, fs = f["client_seconds_total"], f["server_seconds"]
        cells += [f"{fc / dc:.0f}x", f"{fs / ds:.0f}x", f"{(fc + fs) / (dc + ds):.0f}x"]
    else:
        cells += ["-", "-", "-"]
    print("| " + " | ".join(cells) + " |")
