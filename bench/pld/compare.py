"""Time dp_accounting 0.6.0's PLD (privacy_loss_distribution, pessimistic, connect-the-dots, at
the same grid) on the golden PLD cases and DP-SGD at q = 0.004, z = 1.1, and compare with
dptune's pld_timing example run in the same process tree.

Usage: compare.py TIMING_BINARY GOLDEN_JSON REPEATS INTERVAL
"""
import json
import statistics
import subprocess
import sys
import time

from dp_accounting.pld import privacy_loss_distribution as pld

BIN, GOLDEN, REPEATS, INTERVAL = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])


def part_pld(p):
    s = p.get("sensitivity", 1.0)
    if p["mechanism"] == "gaussian":
        one = pld.from_gaussian_mechanism(p["sigma"], sensitivity=s,
                                          value_discretization_interval=INTERVAL,
                                          sampling_prob=p.get("q", 1.0))
    elif p["mechanism"] == "laplace":
        one = pld.from_laplace_mechanism(p["b"], sensitivity=s,
                                         value_discretization_interval=INTERVAL,
                                         sampling_prob=p.get("q", 1.0))
    elif p["mechanism"] == "discrete_gaussian":
        one = pld.from_discrete_gaussian_mechanism(p["sigma"], sensitivity=int(s),
                                                   value_discretization_interval=INTERVAL)
    else:
        raise ValueError(p["mechanism"])
    t = p.get("times", 1)
    return one.self_compose(t) if t > 1 else one


def dpa(inputs):
    total = None
    for p in inputs["parts"]:
        one = part_pld(p)
        total = one if total is None else total.compose(one)
    return total.get_epsilon_for_delta(inputs["delta"])


def timed(f):
    """The value, the median wall time and the mean CPU time per call (all threads)."""
    value, times = f(), []
    cpu = time.process_time()
    for _ in range(REPEATS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return value, statistics.median(times), (time.process_time() - cpu) / REPEATS


golden = json.load(open(GOLDEN))
cases = [(c["id"], c["inputs"]) for c in golden["cases"]]
for steps in (1000, 10000):
    cases.append((f"dpsgd_q0.004_z1.1_T{steps}",
                  {"parts": [{"mechanism": "gaussian", "sigma": 1.1, "q": 0.004, "times": steps}],
                   "delta": 1e-5}))
out = subprocess.run([BIN, GOLDEN, str(REPEATS), str(INTERVAL)], check=True,
                     capture_output=True, text=True).stdout
ours = {r["id"]: r for r in map(json.loads, out.splitlines())}
with open("/proc/loadavg") as f:
    load = f.read().split()[:3]
print(f"grid {INTERVAL}, {REPEATS} repeats; wall: median ms, cpu: mean ms per call (all threads); "
      f"load average {' '.join(load)}")
print(f"{'case':34} {'eps dptune':>11} {'eps dp_acc':>11} {'dptune ms':>10} {'dp_acc ms':>10} "
      f"{'ratio':>6} {'dptune cpu':>10} {'dp_acc cpu':>10} {'ratio':>6} {'points':>8}")
for cid, inputs in cases:
    eps, secs, cpu = timed(lambda: dpa(inputs))
    r = ours[cid]
    ours_cpu = r.get("cpu_s") or float("nan")
    print(f"{cid:34} {r['epsilon']:11.6f} {eps:11.6f} {r['median_s'] * 1e3:10.2f} "
          f"{secs * 1e3:10.2f} {secs / r['median_s']:6.1f} {ours_cpu * 1e3:10.2f} "
          f"{cpu * 1e3:10.2f} {cpu / ours_cpu:6.1f} {r['grid_points']:8d}")
