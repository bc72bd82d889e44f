"""The DP-HYPE ``ServerApp`` (Flower 1.42 Message API)."""

from __future__ import annotations

import time

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.serverapp import Grid, ServerApp

from .. import _core
from . import _protocol as P

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    cfg = P.RoundConfig.from_run_config(context.run_config)
    deadline = time.monotonic() + float(context.run_config.get("wait-nodes", 120))
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= cfg.min_nodes:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(nodes)} of {cfg.min_nodes} nodes connected")
        time.sleep(1.0)
    nodes = nodes[: cfg.min_nodes]
    rnd = P.ServerRound(cfg, nodes)
    # Fault-injection windows for tests (run config): `pause-after-keys` after stage 0, and
    # `pause-before-stage` before every stage, announced by a `DPTUNE_SEND s` line.
    pause = float(context.run_config.get("pause-after-keys", 0.0))
    pause_before = float(context.run_config.get("pause-before-stage", 0.0))
    try:
        for stage in range(P.STAGES):
            out = rnd.outgoing()
            if pause_before > 0:
                print(f"DPTUNE_SEND {stage}", flush=True)
                time.sleep(pause_before)
            msgs = [
                Message(
                    content=RecordDict(
                        {"dphype": ConfigRecord({"stage": stage, "sid": sid, "data": data})}
                    ),
                    dst_node_id=nodes[sid],
                    message_type="query",
                )
                for sid, data in out.items()
            ]
            # Bounded: a node that crashed never answers, and the stage closes at the timeout.
            replies = grid.send_and_receive(msgs, timeout=cfg.stage_timeout)
            by_node = {n: i for i, n in enumerate(nodes)}
            got = []
            for r in replies:
                if r.has_error():
                    continue
                sid = by_node.get(r.metadata.src_node_id)
                body = r.content["dphype"]
                if sid is None or int(body["stage"]) != stage:
                    continue
                got.append((sid, bytes(body["data"])))
            accepted = rnd.collect(got)
            print(f"DPTUNE_STAGE {stage} done: {accepted} of {len(out)} answered", flush=True)
            if stage == 0 and pause > 0:
                time.sleep(pause)
            if stage < P.STAGES - 1:
                rnd.advance()
        result = rnd.finish()
    except _core.NoRelease:
        # Too few survivors at some stage, or a secret that cannot be reconstructed or fails
        # its check: nothing is released. The reason (which may name clients) stays here.
        print(P.refusal_line(), flush=True)
        return
    print(P.result_line(result), flush=True)
    print(P.summary_line(result), flush=True)
