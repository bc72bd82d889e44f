"""A local DP-HYPE deployment on Flower 1.42: one SuperLink, ``--nodes`` SuperNodes, the app run
with ``flwr run``, everything stopped at the end.

It waits for each part to be ready before using it (a ``flwr run`` sent before the SuperLink
answers fails with "Connection to the SuperLink is unavailable"): the SuperLink's health
endpoint, then every SuperNode online (``flwr supernode list``), each within ``--timeout``
seconds, else it stops with an error that names the log to read. All logs and Flower's home
directory go to ``--log-dir`` (default: a new temporary directory, printed), never to the
current directory; the app is copied there before ``flwr run`` builds it.

    pip install ./crates/dptune-py flwr==1.42.0
    python crates/dptune-py/examples/dphype-flower/deploy.py --run-config "epsilon=1.0 k=3"

The ServerApp prints ``DPTUNE_RESULT {...}`` (the selected index and configuration, the
whole round's epsilon for the actual number of survivors) and a readable summary that explains
an epsilon below the target. Exit code 0 on a release, 3 when the round released nothing, 1 when
the deployment failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

APP = Path(__file__).resolve().parent
#: Flower's command-line tools, from this interpreter's environment first.
BIN = Path(sys.executable).parent


class NotReady(RuntimeError):
    """A part of the deployment did not become ready in time."""


def _tool(name: str) -> str:
    local = BIN / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(ready: Callable[[], bool], what: str, timeout: float, log: Path,
               alive: Callable[[], bool] = lambda: True) -> None:
    """Polls ``ready`` every half second; raises :class:`NotReady` naming ``what`` and the log
    to read after ``timeout`` seconds, or at once if the process behind it died."""
    deadline = time.monotonic() + timeout
    while not ready():
        if not alive():
            raise NotReady(f"{what} exited before it was ready; see {log}")
        if time.monotonic() > deadline:
            raise NotReady(f"{what} not ready after {timeout:g} s; see {log}")
        time.sleep(0.5)


def superlink_healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
            return True
    except OSError:
        return False


def online_supernodes(env: Dict[str, str]) -> int:
    """The number of SuperNodes the SuperLink lists as online (0 if it cannot say yet)."""
    try:
        out = subprocess.run(
            [_tool("flwr"), "supernode", "list", "deploy", "--format", "json"],
            env=env, capture_output=True, text=True, timeout=30,
        ).stdout
        nodes = json.loads(out).get("nodes", [])
    except (OSError, subprocess.SubprocessError, ValueError, AttributeError):
        return 0
    return sum(1 for n in nodes if isinstance(n, dict) and n.get("status") == "online")


class Deployment:
    """The running processes (each in its own process group) and where their logs go."""

    def __init__(self, log_dir: Path, port: int):
        self.log_dir, self.port = log_dir, port
        self.procs: List[subprocess.Popen[Any]] = []
        home = log_dir / "flwrhome"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'[superlink]\ndefault = "deploy"\n\n[superlink.deploy]\naddress = "127.0.0.1:{port}"'
            "\ninsecure = true\n"
        )
        # Flower starts its own helpers (flower-superexec, ...) from PATH: this environment's.
        path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        self.env = dict(os.environ, FLWR_HOME=str(home), FLWR_DISABLE_UPDATE_CHECK="1",
                        PYTHONUNBUFFERED="1", PATH=path)

    def start(self, args: Sequence[str], log: str) -> "subprocess.Popen[bytes]":
        with open(self.log_dir / log, "wb") as out:
            p = subprocess.Popen(list(args), stdout=out, stderr=subprocess.STDOUT,
                                 env=self.env, start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def deploy(nodes: int, port: int, log_dir: Path, timeout: float, run_config: str) -> int:
    d = Deployment(log_dir, port)
    try:
        link = d.start([_tool("flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port",
                        str(port), "--disable-runtime-dependency-installation", "--database",
                        str(log_dir / "state.db")], "superlink.log")
        wait_until(lambda: superlink_healthy(port), f"the SuperLink on port {port}", timeout,
                   log_dir / "superlink.log", alive=lambda: link.poll() is None)
        print(f"SuperLink ready on 127.0.0.1:{port}", flush=True)
        for i in range(nodes):
            d.start([_tool("flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                     "--port", str(free_port()), "--node-config",
                     f"partition-id={i} num-partitions={nodes}"], f"supernode{i}.log")
        wait_until(lambda: online_supernodes(d.env) >= nodes, f"{nodes} SuperNodes", timeout,
                   log_dir / "supernode0.log")
        print(f"{nodes} SuperNodes online", flush=True)
        app = log_dir / "app"
        shutil.copytree(APP, app, ignore=shutil.ignore_patterns("__pycache__", "deploy.py"))
        if "min-nodes" not in run_config:
            run_config = f"{run_config} min-nodes={nodes}".strip()
        cmd = [_tool("flwr"), "run", ".", "deploy", "--stream", "--run-config", run_config]
        status = 1
        with open(log_dir / "flwr-run.log", "w") as log:
            run = subprocess.Popen(cmd, cwd=app, env=d.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
            d.procs.append(run)
            assert run.stdout is not None
            for line in run.stdout:
                log.write(line)
                if line.startswith(("DPTUNE_", "DP-HYPE ")):
                    print(line, end="", flush=True)
                if line.startswith("DPTUNE_RESULT "):
                    status = 0
                elif line.startswith("DPTUNE_REFUSED "):
                    status = 3
                if line.startswith(("DP-HYPE selected", "DPTUNE_REFUSED ")):
                    break  # the round's last line: the run is over
        return status
    finally:
        d.stop()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5, help="SuperNodes to start (min-nodes)")
    ap.add_argument("--port", type=int, default=0, help="SuperLink port (0: a free one)")
    ap.add_argument("--log-dir", type=Path, default=None,
                    help="where logs go (default: a new temporary directory)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds each part may take to become ready")
    ap.add_argument("--run-config", default="", help='passed to flwr run, e.g. "epsilon=1.0 k=3"')
    a = ap.parse_args(argv)
    log_dir = a.log_dir or Path(tempfile.mkdtemp(prefix="dphype-deploy-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"logs in {log_dir}", flush=True)
    try:
        return deploy(a.nodes, a.port or free_port(), log_dir.resolve(), a.timeout, a.run_config)
    except NotReady as e:
        print(f"deploy: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
