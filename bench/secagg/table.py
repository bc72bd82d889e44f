"""Reads the JSON lines of bench/secagg/run.sh and prints a Markdown table with Flower/dptune
compute ratios per configuration (n, num_shares, threshold)."""

import json
import sys

rows = [json.loads(line) for line in sys.stdin if line.startswith("{")]
by = {}
for r in rows:
    by.setdefault((r["n"], r["num_shares"], r["threshold"]), {})[r["impl"]] = r

print("| n | num_shares | threshold | dptune clients (sum) | dptune server | Flower clients (sum)"
      " | Flower server | clients ratio | server ratio | total ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (n, k, t), impls in sorted(by.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
    d = impls.get("dptune")
    f = impls.get("flower-1.42-secagg+")
    cells = [str(n), str(k), str(t)]
    cells += [f"{d['client_seconds_total']:.3f} s", f"{d['server_seconds']:.4f} s"] if d else ["-", "-"]
    cells += [f"{f['client_seconds_total']:.2f} s", f"{f['server_seconds']:.3f} s"] if f else ["-", "-"]
    if d and f:
        dc, ds = d["client_seconds_total"], d["server_seconds"]
        fc, fs = f["client_seconds_total"], f["server_seconds"]
        cells += [f"{fc / dc:.0f}x", f"{fs / ds:.0f}x", f"{(fc + fs) / (dc + ds):.0f}x"]
    else:
        cells += ["-", "-", "-"]
    print("| " + " | ".join(cells) + " |")
