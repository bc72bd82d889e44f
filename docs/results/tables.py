#!/usr/bin/env python3
"""Markdown tables of mean regret (± SE) per method and budget from docs/results/*.json.
Usage: python3 docs/results/tables.py docs/results/NAME.json ...  (standard library only)"""
import json, sys

for path in sys.argv[1:]:
    r = json.load(open(path))
    eps = r["options"]["epsilons"]
    print(f"**{r['title']}**: m = {r['configurations']:,}, select on `{r['validation_source']}`, "
          f"regret on {r['test_source']}; {r['tied_best']} tied best; "
          f"uniform-choice mean regret {r['table_mean_regret']:.4g}.\n")
    print("| method | " + " | ".join(f"ε = {e:g}" for e in eps) + " |")
    print("|---|" + "---:|" * len(eps))
    nb = len(eps)
    for j, m in enumerate(r["options"]["methods"]):
        cells = r["cells"][j * nb:(j + 1) * nb]
        row = []
        for c in cells:
            s = f"{c['mean']:.4f}"
            if not c["exact"]:
                s += f" ± {c['se']:.4f}"
            row.append(s)
        print(f"| {m} | " + " | ".join(row) + " |")
    print()
