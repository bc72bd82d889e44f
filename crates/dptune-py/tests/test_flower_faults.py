"""Real Flower 1.42 deployments on 127.0.0.1 with SuperNodes killed (SIGKILL to the process
group) at every secure-aggregation stage. Each run must end, within a bounded time, either in
the release an in-process run computes for the same surviving partitions (the exact sum over the
survivors) or in the typed refusal line; never a wrong result, never a hang.

The ServerApp announces each stage with `DPTUNE_SEND s` and waits `pause-before-stage` seconds
before sending it (run config), so a node killed at that line never receives stage s: it is a
dropout of stage s. Every process runs in its own session and is stopped in a `finally`.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

pytest.importorskip("flwr", reason="Flower 1.42 is not installed (pip install flwr==1.42.0)")

from dptune.flower import run_in_process  # noqa: E402
from test_flower_loopback import APP, BIN, _free_port, _start, _stop, _toml  # noqa: E402

STAGE_TIMEOUT = 20.0


def _deploy(tmp_path, nodes: int, run_config: dict, kill_at: dict, deadline: float):
    """Runs one round with `nodes` SuperNodes; `kill_at[s]` lists the partitions killed at the
    `DPTUNE_SEND s` line. Returns the output lines of `flwr run` and the kills done."""
    start = time.monotonic()
    home = tmp_path / "flwrhome"
    home.mkdir()
    env = dict(os.environ)
    env.update(
        FLWR_HOME=str(home),
        FLWR_DISABLE_UPDATE_CHECK="1",
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
    )
    port = _free_port()
    (home / "config.toml").write_text(
        f'[superlink]\ndefault = "deploy"\n\n[superlink.deploy]\naddress = "127.0.0.1:{port}"\n'
        "insecure = true\n"
    )
    app = tmp_path / "app"
    shutil.copytree(APP, app)
    procs, supernodes, lines, killed = [], {}, [], []
    try:
        procs.append(
            _start(
                [str(BIN / "flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port",
                 str(port), "--disable-runtime-dependency-installation",
                 "--database", str(tmp_path / "state.db")],
                tmp_path / "superlink.log",
                env,
            )
        )
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except Exception:
                assert procs[0].poll() is None, (tmp_path / "superlink.log").read_text()[-3000:]
                assert time.monotonic() - start < 60, "SuperLink not healthy after 60 s"
                time.sleep(0.5)
        for i in range(nodes):
            p = _start(
                [str(BIN / "flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                 "--port", str(_free_port()),
                 "--node-config", f"partition-id={i} num-partitions={nodes}"],
                tmp_path / f"supernode{i}.log",
                env,
            )
            procs.append(p)
            supernodes[i] = p
        rc = " ".join(f"{k}={_toml(v)}" for k, v in run_config.items())
        run = subprocess.Popen(
            [str(BIN / "flwr"), "run", ".", "deploy", "--stream", "--run-config", rc],
            cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, text=True,
        )
        procs.append(run)

        def reader():
            for line in run.stdout:
                lines.append(line)
                if line.startswith("DPTUNE_SEND "):
                    for part in kill_at.get(int(line.split()[1]), []):
                        os.killpg(supernodes[part].pid, signal.SIGKILL)
                        killed.append(part)

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        done = ("DPTUNE_RESULT ", "DPTUNE_REFUSED ")
        while run.poll() is None and not any(l.startswith(done) for l in lines):
            assert time.monotonic() - start < deadline, "HANG: " + "".join(lines)[-5000:]
            time.sleep(0.5)
        t.join(timeout=5)
        (tmp_path / "flwr-run.log").write_text("".join(lines))
    finally:
        _stop(procs)
    for p in procs:
        assert p.poll() is not None, f"process {p.pid} still running"
    assert time.monotonic() - start < deadline
    return lines, killed


def _outcome(lines):
    out = "".join(lines)
    results = [l for l in lines if l.startswith("DPTUNE_RESULT ")]
    refusals = [l for l in lines if l.startswith("DPTUNE_REFUSED ")]
    assert len(results) + len(refusals) == 1, out[-5000:]
    if results:
        return "result", json.loads(results[0][len("DPTUNE_RESULT "):])
    return "refused", json.loads(refusals[0][len("DPTUNE_REFUSED "):])


@pytest.mark.parametrize(
    "nodes, t, kill_at, survivors",
    [
        # Partition 6 dies before stage 0 (keys), 5 before stage 1 (shares), 4 before stage 2
        # (masked input): survivors 0..3, exactly the Shamir threshold max(t, n/2 + 1) = 4.
        (7, 4, {0: [6], 1: [5], 2: [4]}, 4),
        # Partition 4 dies before stage 3 (attest), 3 before stage 4 (unmask): both masked
        # inputs are in the sum, their self-masks are recovered from the others' shares; 4
        # attest (threshold 3), 3 answer.
        (5, 3, {3: [4], 4: [3]}, 5),
    ],
)
def test_a_client_killed_at_each_stage_leaves_the_exact_result_of_the_survivors(
    tmp_path, nodes, t, kill_at, survivors
):
    rc = {"candidates": 12, "k": 3, "epsilon": 1.0, "delta": 1e-5, "min-nodes": nodes,
          "min-survivors": t, "stage-timeout": STAGE_TIMEOUT, "pause-before-stage": 1.5,
          "seed": 20261201}
    lines, killed = _deploy(tmp_path, nodes, rc, kill_at, deadline=170.0)
    dead = {p: s for s, ps in kill_at.items() for p in ps}
    assert sorted(killed) == sorted(dead), "".join(lines)[-3000:]
    kind, deployed = _outcome(lines)
    assert kind == "result", deployed
    assert deployed["survivors"] == survivors
    local = run_in_process(rc, [{"partition-id": i} for i in range(nodes)], drop_after=dead)
    assert deployed == local


def test_too_few_survivors_at_unmask_is_a_typed_refusal_within_the_timeout(tmp_path):
    # Three nodes, t = 2 (threshold 2): two die after attesting the survivor set, before the
    # unmask request. The masked inputs cannot be unmasked: the server prints the refusal line
    # (nothing released) after one stage timeout, instead of a sum or a hang.
    nodes = 3
    rc = {"candidates": 12, "k": 3, "epsilon": 1.0, "delta": 1e-5, "min-nodes": nodes,
          "min-survivors": 2, "stage-timeout": STAGE_TIMEOUT, "pause-before-stage": 1.5,
          "seed": 20261202}
    lines, killed = _deploy(tmp_path, nodes, rc, {4: [1, 2]}, deadline=120.0)
    assert sorted(killed) == [1, 2]
    kind, body = _outcome(lines)
    assert kind == "refused", body
    assert body == {"error": "NoRelease", "released": None}
    assert not any("DPTUNE_STAGE 4 done: 3" in l for l in lines)
