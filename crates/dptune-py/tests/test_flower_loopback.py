"""A real Flower 1.42 deployment on 127.0.0.1: one flower-superlink, 5 flower-supernode
processes, the DP-HYPE app run with `flwr run`, one client killed (SIGKILL to its process group)
after the first secure-aggregation stage. The selected index and the guarantee must equal an
in-process run with the same seeds and the same survivors.

Every process is started in its own session (setsid) and stopped by its PID's process group in
a `finally`, pass or fail; the whole test is bounded by DEADLINE seconds.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

flwr = pytest.importorskip("flwr", reason="Flower 1.42 is not installed (pip install flwr==1.42.0)")

from dptune.flower import run_in_process  # noqa: E402

APP = Path(__file__).resolve().parents[1] / "examples" / "dphype-flower"
BIN = Path(sys.executable).parent
NODES = 5
KILLED = 4  # partition id of the client killed mid-round
DEADLINE = 300.0
SEED = 20261129
RUN_CONFIG = {
    "candidates": 20,
    "k": 3,
    "epsilon": 1.0,
    "delta": 1e-5,
    "min-nodes": NODES,
    "min-survivors": 3,
    "stage-timeout": 25.0,
    "pause-after-keys": 4.0,
    "seed": SEED,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args, log: Path, env) -> subprocess.Popen:
    f = open(log, "wb")
    return subprocess.Popen(
        args, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )


def _stop(procs) -> None:
    """SIGTERM every process group, wait up to 10 s, then SIGKILL what is left."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _toml(v) -> str:
    return json.dumps(v) if isinstance(v, str) else repr(v)


def test_dphype_on_a_real_flower_deployment_with_a_client_killed(tmp_path):
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
    procs = []
    supernodes = {}
    run = None
    lines = []
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
        for i in range(NODES):
            p = _start(
                [str(BIN / "flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                 "--port", str(_free_port()),
                 "--node-config", f"partition-id={i} num-partitions={NODES}"],
                tmp_path / f"supernode{i}.log",
                env,
            )
            procs.append(p)
            supernodes[i] = p
        rc = " ".join(f"{k}={_toml(v)}" for k, v in RUN_CONFIG.items())
        run = subprocess.Popen(
            [str(BIN / "flwr"), "run", ".", "deploy", "--stream", "--run-config", rc],
            cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, text=True,
        )
        procs.append(run)
        killed = threading.Event()

        def reader():
            for line in run.stdout:
                lines.append(line)
                if line.startswith("DPTUNE_STAGE 0") and not killed.is_set():
                    os.killpg(supernodes[KILLED].pid, signal.SIGKILL)
                    killed.set()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        while run.poll() is None and not any(l.startswith("DPTUNE_RESULT") for l in lines):
            assert time.monotonic() - start < DEADLINE, "".join(lines)[-5000:]
            time.sleep(0.5)
        t.join(timeout=5)
        out = "".join(lines)
        (tmp_path / "flwr-run.log").write_text(out)
        assert killed.is_set(), out[-5000:]
        result_lines = [l for l in lines if l.startswith("DPTUNE_RESULT ")]
        assert result_lines, out[-5000:]
        deployed = json.loads(result_lines[-1][len("DPTUNE_RESULT "):])
    finally:
        _stop(procs)
    for p in procs:
        assert p.poll() is not None, f"process {p.pid} still running"
    assert deployed["survivors"] == NODES - 1, deployed  # a count: which node died is not released
    # In-process: the same code, the same seeds, partition KILLED crashed before stage 1.
    local = run_in_process(
        RUN_CONFIG, [{"partition-id": i} for i in range(NODES)], drop_after={KILLED: 1}
    )
    assert deployed["selected"] == local["selected"]
    assert deployed["epsilon"] == local["epsilon"]
    assert deployed["guarantee"] == local["guarantee"]
    assert deployed["neighbours"] == local["neighbours"] == "replace_one"
    assert deployed == local
    assert time.monotonic() - start < DEADLINE
