"""The DP-HYPE ``ClientApp`` (Flower 1.42 Message API)."""

from __future__ import annotations

from typing import Optional

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp

from . import _protocol as P

_STATE = "dptune-dphype"


def _load_state(context: Context) -> dict:
    rec = context.state.get(_STATE) if _STATE in context.state else None
    if rec is None:
        return {}
    n = int(rec["nmsgs"])
    return {
        "key": bytes(rec["key"]),
        "vote": bytes(rec["vote"]),
        "sid": int(rec["sid"]),
        "round": int(rec["round"]),
        "msgs": [bytes(rec[f"msg{i}"]) for i in range(n)],
    }


def _save_state(context: Context, state: dict) -> None:
    rec = ConfigRecord(
        {
            "key": state["key"],
            "vote": state["vote"],
            "sid": int(state["sid"]),
            "round": int(state["round"]),
            "nmsgs": len(state["msgs"]),
        }
    )
    for i, m in enumerate(state["msgs"]):
        rec[f"msg{i}"] = m
    context.state[_STATE] = rec


def build(evaluate: Optional[P.Evaluate] = None) -> ClientApp:
    """A ClientApp with ``evaluate`` as the local evaluation (or the run config's
    ``evaluate-fn``)."""
    app = ClientApp()

    @app.query()
    def query(msg: Message, context: Context) -> Message:
        cfg = P.RoundConfig.from_run_config(context.run_config)
        body = msg.content["dphype"]
        stage = int(body["stage"])
        sid = int(body["sid"])
        data = bytes(body["data"])
        fn = evaluate or P.load_evaluate(cfg.evaluate)
        state = _load_state(context)
        part = int(context.node_config.get("partition-id", sid))
        out = P.client_step(cfg, stage, sid, data, state, fn, context, part)
        _save_state(context, state)
        return Message(
            content=RecordDict({"dphype": ConfigRecord({"stage": stage, "data": out})}),
            reply_to=msg,
        )

    return app


app = build()
