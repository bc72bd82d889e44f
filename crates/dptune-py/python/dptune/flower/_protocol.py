"""DP-HYPE over dptune's secure aggregation, independent of the transport.

The Flower apps (``server_app``, ``client_app``) and the in-process run (:func:`run_in_process`)
share this code, so a deployment and an in-process run with the same seeds and the same
survivors release the same index and the same guarantee.

Round structure (five server ↔ client round trips, the SecAgg stages):

0. the server assigns SecAgg ids 0..n−1 to the first ``min-nodes`` nodes (sorted by node id);
   each client evaluates every candidate locally (the user's function), forms its top-k vote,
   adds its Skellam noise share, and advertises its SecAgg keys;
1. share keys; 2. masked input; 3. attest the survivor set; 4. unmask. The server learns only
   the sum of the surviving clients' noisy votes, refuses below ``min-survivors``, and releases
   the argmax together with the client-level guarantee for the actual number of survivors. The
   Shamir threshold is max(min-survivors, ⌊min-nodes/2⌋ + 1): below that many clients in any
   stage the round is refused (docs/FEDERATED.md, "Faults").

Participation never depends on a client's data: a NaN score counts as the worst, and a client
whose local evaluation fails (raises, returns the wrong shape, or outlasts the public evaluation
deadline, which is below the stage timeout) still submits a valid vote for k candidates drawn
uniformly at random, independently of its data (see :func:`local_scores`).
Only crashes and the network make a client drop out; the release then names the number of
survivors (needed for its ε), never which clients survived.

A Flower ClientApp runs in a fresh process per message, so the client keeps its state in
Flower's node-local ``context.state``: its secret 32-byte SecAgg key, its noisy vote, and the
server messages it has seen; each stage rebuilds the SecAgg client by replaying them (the
protocol is deterministic given the key).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np

from .. import _core

#: ``evaluate(candidates, context) -> scores``: the client's local evaluation of every
#: candidate (higher is better), a float array of length ``candidates``.
Evaluate = Callable[[int, Any], np.ndarray]

STAGES = 5


@dataclass(frozen=True)
class RoundConfig:
    """The public parameters of one DP-HYPE round (from Flower's run config)."""

    candidates: int
    k: int
    epsilon: float
    delta: float
    min_nodes: int
    min_survivors: int
    neighbours: str = "replace_one"
    round: int = 0
    stage_timeout: float = 60.0
    seed: Optional[int] = None  # research runs only: NOT private against anyone who knows it
    evaluate: str = "dptune.flower.demo:evaluate"
    #: ``module:function`` giving the public configurations the candidates stand for
    #: (:func:`load_configurations`), so that the release names the selected one.
    configurations: str = "dptune.flower.demo:configurations"
    #: Colluding survivors the guarantee must hold against (an assumption; 0: nobody colludes).
    #: Each noise share is sized for ``min_survivors − colluders`` honest clients.
    colluders: int = 0
    #: Seconds a client gives its local evaluation (public, below ``stage_timeout``; None:
    #: half of it). A late evaluation is replaced by the data-free vote (:func:`local_scores`).
    eval_deadline: Optional[float] = None
    #: Whether a client always answers stage 0 at the deadline (never earlier), so that the
    #: server cannot time its evaluation either.
    pad_to_deadline: bool = False

    @property
    def deadline(self) -> float:
        """The evaluation deadline in seconds."""
        return self.stage_timeout / 2.0 if self.eval_deadline is None else self.eval_deadline

    @staticmethod
    def from_run_config(rc: Mapping[str, Any]) -> "RoundConfig":
        def get(key, cast, default=None):
            v = rc.get(key, default)
            if v is None:
                raise _core.InvalidParameter(
                    f"invalid parameter `{key}` = None: missing from the run config"
                )
            return cast(v)

        seed = rc.get("seed")
        colluders = get("colluders", int, 0)
        if colluders < 0:
            raise _core.InvalidParameter(
                f"invalid parameter `colluders` = {colluders}: must be at least 0"
            )
        stage_timeout = get("stage-timeout", float, 60.0)
        if not 0.0 < stage_timeout < float("inf"):
            raise _core.InvalidParameter(
                f"invalid parameter `stage-timeout` = {stage_timeout!r}: must be a positive "
                "number of seconds"
            )
        eval_deadline = rc.get("eval-deadline")
        if eval_deadline is not None:
            eval_deadline = float(eval_deadline)
            if not 0.0 < eval_deadline < stage_timeout:
                raise _core.InvalidParameter(
                    f"invalid parameter `eval-deadline` = {eval_deadline!r}: must be positive and "
                    f"below `stage-timeout` = {stage_timeout!r} (stage 0 must still reach the "
                    "server after the evaluation)"
                )
        pad = rc.get("pad-to-deadline", False)
        if not isinstance(pad, bool):
            raise _core.InvalidParameter(
                f"invalid parameter `pad-to-deadline` = {pad!r}: must be true or false"
            )
        return RoundConfig(
            candidates=get("candidates", int),
            k=get("k", int),
            epsilon=get("epsilon", float),
            delta=get("delta", float),
            min_nodes=get("min-nodes", int),
            min_survivors=get("min-survivors", int),
            neighbours=get("neighbours", str, "replace_one"),
            round=get("round", int, 0),
            stage_timeout=stage_timeout,
            seed=None if seed in (None, "", -1) else int(seed),
            evaluate=get("evaluate-fn", str, "dptune.flower.demo:evaluate"),
            configurations=get("configurations-fn", str, "dptune.flower.demo:configurations"),
            colluders=colluders,
            eval_deadline=eval_deadline,
            pad_to_deadline=pad,
        )

    def plan(self) -> "_core.NoisePlan":
        return _core.NoisePlan.calibrate(
            self.k,
            self.epsilon,
            self.delta,
            self.min_survivors,
            self.neighbours,
            colluders=self.colluders,
        )


def _load(key: str, spec: str) -> Any:
    """Imports ``module:function`` (the run config's ``key``)."""
    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise _core.InvalidParameter(
            f"invalid parameter `{key}` = {spec}: expected \"module:function\""
        )
    return getattr(importlib.import_module(mod), attr)


def load_evaluate(spec: str) -> Evaluate:
    """Imports ``module:function``."""
    return _load("evaluate-fn", spec)  # type: ignore[no-any-return]


def load_configurations(cfg: RoundConfig) -> List[Any]:
    """The public configurations of the ``candidates`` (``configurations-fn``, called as
    ``fn(candidates)``): one JSON-serialisable value per candidate, in candidate order. Public:
    declared before the round, the same on the server and every client. Checked when the
    server's round starts (an :class:`InvalidParameter` naming ``configurations-fn``)."""
    fn = _load("configurations-fn", cfg.configurations)
    try:
        configs = list(fn(cfg.candidates))
        json.dumps(configs)
    except (TypeError, ValueError):
        configs = None
    if configs is None or len(configs) != cfg.candidates:
        raise _core.InvalidParameter(
            f"invalid parameter `configurations-fn` = {cfg.configurations}: must return one "
            f"JSON-serialisable configuration per candidate ({cfg.candidates})"
        )
    return configs


# ------------------------------------------------------------------------------------------------
# Client side

_log = logging.getLogger("dptune.flower")


class _Late(Exception):
    """The local evaluation did not finish by the deadline."""


def _evaluate_by_deadline(cfg: RoundConfig, evaluate: Evaluate, context: Any) -> Any:
    """``evaluate(candidates, context)`` in a daemon thread, waited for ``cfg.deadline``
    seconds: its result, its exception re-raised, or :class:`_Late`. A late evaluation keeps
    running in the background (Python cannot stop a thread) and its result is discarded."""
    box: Dict[str, Any] = {}

    def work() -> None:
        try:
            box["scores"] = evaluate(cfg.candidates, context)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    worker = threading.Thread(target=work, name="dptune-local-evaluation", daemon=True)
    worker.start()
    worker.join(cfg.deadline)
    if worker.is_alive():
        raise _Late()
    if "error" in box:
        raise box["error"]
    return box["scores"]


def local_scores(cfg: RoundConfig, evaluate: Evaluate, context: Any, partition: int) -> np.ndarray:
    """The client's scores, never an exception and never later than the evaluation deadline:
    whether a client votes must not depend on its data (a dropout shows in the released survivor
    count, and a missing share changes the noise), and a client whose evaluation outlasted the
    stage timeout would be a dropout through timing.

    If ``evaluate`` raises (any ``Exception``), does not finish within ``cfg.deadline`` seconds
    (``eval-deadline``, public, below the stage timeout), returns anything but ``candidates``
    real numbers, or only NaN, the client votes for k candidates drawn uniformly at random —
    from the operating system, or, in a seeded research run, from (seed, partition). The choice
    does not depend on the data, so the vote's sensitivity and the accounting are unchanged;
    uniform rather than the first k so that failed clients add no systematic weight to any
    candidate (in expectation k/p to each). The failure is logged on the client only (the data
    owner's own log). Some NaN scores among others are kept: the vote counts them as the worst
    (``top_k_vote``). With ``pad-to-deadline`` the function returns at the deadline, never
    earlier, so the time of the client's stage-0 answer does not depend on its data."""
    start = time.monotonic()
    try:
        scores = np.asarray(_evaluate_by_deadline(cfg, evaluate, context), dtype=np.float64)
        if scores.shape != (cfg.candidates,):
            reason = f"it returned shape {scores.shape}, not ({cfg.candidates},)"
        elif np.isnan(scores).all():
            reason = "every score is NaN"
        else:
            reason = None
    except _Late:
        reason = f"it did not finish within the deadline of {cfg.deadline} s"
    except Exception as e:  # noqa: BLE001 - any failure on the data becomes a data-free vote
        reason = f"it raised {type(e).__name__}"
    if reason is not None:
        _log.warning("local evaluation failed (%s): voting for k random candidates", reason)
        scores = _data_free_vote(cfg, partition)
    if cfg.pad_to_deadline:
        time.sleep(max(0.0, start + cfg.deadline - time.monotonic()))
    return scores


def _data_free_vote(cfg: RoundConfig, partition: int) -> np.ndarray:
    """Scores whose top k are k candidates drawn uniformly at random (0 for them, −∞ for the
    rest), independently of any data."""
    if cfg.seed is None:
        chosen = random.SystemRandom().sample(range(cfg.candidates), cfg.k)
    else:
        rng = np.random.default_rng([cfg.seed, partition, 1])
        chosen = rng.choice(cfg.candidates, size=cfg.k, replace=False)
    fallback = np.full(cfg.candidates, -np.inf)
    fallback[np.asarray(chosen)] = 0.0
    return fallback


def client_step(
    cfg: RoundConfig,
    stage: int,
    sid: int,
    server_msg: bytes,
    state: Dict[str, Any],
    evaluate: Evaluate,
    context: Any,
    partition: int,
) -> bytes:
    """Handles one server message. ``state`` is the client's persistent, node-local state
    (a dict of bytes/ints; the Flower app maps it onto ``context.state``)."""
    mine = state.get("sid") == sid and state.get("round") == cfg.round
    if stage == 0 and mine and state.get("msgs") == []:
        # The stage-0 message again (a redelivery): answer with the same advertisement. A
        # fresh key would no longer match the one the server kept, and the client would drop.
        pass
    elif stage == 0 and not mine:
        scores = local_scores(cfg, evaluate, context, partition)
        noisy = _core.noisy_vote(scores, cfg.plan(), seed=cfg.seed, stream=partition)
        state.clear()
        state["key"] = os.urandom(32)
        state["vote"] = noisy.astype("<i8").tobytes()
        state["sid"] = sid
        state["round"] = cfg.round
        state["msgs"] = []
    elif not mine or len(state.get("msgs", [])) != stage - 1:
        # A stage out of order, repeated, or for another round or id: refused, state unchanged.
        raise _core.DptuneError(
            "data error in secure-aggregation protocol (client): stage out of order"
        )
    vote = np.frombuffer(state["vote"], dtype="<i8")
    client = _core.SecAggClient(
        sid,
        cfg.min_nodes,
        cfg.min_survivors,
        vote,
        state["key"],
        round=cfg.round,
        colluders=cfg.colluders,
    )
    steps = [client.share_keys, client.masked_input, client.attest, client.unmask]
    out = client.advertise_keys()
    for i, m in enumerate(state["msgs"]):
        out = steps[i](m)
    if stage > 0:
        out = steps[stage - 1](server_msg)
        state["msgs"] = list(state["msgs"]) + [server_msg]
    return out


# ------------------------------------------------------------------------------------------------
# Server side


def _sender(data: bytes) -> Optional[int]:
    """The sender id in a secure-aggregation message header (magic ``DSA1``, kind u8, round
    u64, sender u32, recipient u32, little-endian: the wire format of dptune's ``secagg::wire``),
    or None if the bytes are too short to hold one."""
    return int.from_bytes(data[13:17], "little") if len(data) >= 21 else None


@dataclass
class ServerRound:
    """The server's side of one round; ``ids`` maps SecAgg ids to transport addresses."""

    cfg: RoundConfig
    ids: List[int]
    server: Any = field(init=False)
    pending: Dict[int, bytes] = field(init=False)
    configurations: List[Any] = field(init=False)

    def __post_init__(self):
        if len(self.ids) != self.cfg.min_nodes:
            raise _core.InvalidParameter(
                f"invalid parameter `nodes` = {len(self.ids)}: need exactly min-nodes = "
                f"{self.cfg.min_nodes}"
            )
        self.server = _core.SecAggServer(
            self.cfg.min_nodes,
            self.cfg.candidates,
            self.cfg.min_survivors,
            round=self.cfg.round,
            colluders=self.cfg.colluders,
        )
        self.pending = {i: b"" for i in range(len(self.ids))}
        self.configurations = load_configurations(self.cfg)

    def outgoing(self) -> Dict[int, bytes]:
        """SecAgg id → message for the current stage."""
        return dict(self.pending)

    def collect(self, replies: Iterable[tuple]) -> int:
        """Feeds (sid, bytes) replies; refused or missing replies count as dropouts, and so does a
        reply whose header names another sender than the node it came from (the transport's
        node id is the client's identity; the protocol alone cannot tell who sent a message).
        Returns the number accepted. An honest client's messages never depend on its data in form (its vote
        always exists, see :func:`local_scores`), so refusals come from crashes, replays or
        tampering only."""
        n = 0
        for sid, data in replies:
            if _sender(data) != sid:
                continue  # claims another client's id than the node it came from
            try:
                self.server.receive(data)
                n += 1
            except _core.DptuneError:
                pass
        return n

    def advance(self) -> None:
        out = self.server.advance()
        self.pending = {int(k): bytes(v) for k, v in out.items()}

    def finish(self) -> Dict[str, Any]:
        """The release: the selected index and the guarantee for the number of survivors and
        the assumed colluders. Which clients survived is not released (the count is what the
        guarantee needs; the identities are known to the server and the clients only, as the
        protocol requires)."""
        total, survivors = self.server.finish()
        guarantee, eps = self.cfg.plan().guarantee(len(survivors), self.cfg.delta)
        selected = _core.select_argmax(total, seed=self.cfg.seed)
        return {
            "selected": int(selected),
            "selected_configuration": self.configurations[int(selected)],
            "candidates": self.cfg.candidates,
            "target_epsilon": self.cfg.epsilon,
            "epsilon_note": epsilon_note(self.cfg, len(survivors), float(eps)),
            "survivors": len(survivors),
            "colluders": self.cfg.colluders,
            "epsilon": float(eps),
            "delta": self.cfg.delta,
            "neighbours": guarantee.neighbours,
            "guarantee": str(guarantee),
            "assumption": (
                f"at most {self.cfg.colluders} colluding survivors (noise sized for "
                f"{self.cfg.min_survivors - self.cfg.colluders} honest clients); participation "
                "does not depend on the clients' data"
            ),
        }


def epsilon_note(cfg: RoundConfig, survivors: int, epsilon: float) -> str:
    """Why the released ε is what it is (public: a function of the public configuration and of
    the released number of survivors). The noise is sized before the round so that
    ``min-survivors`` survivors (``colluders`` of them assumed to know their own shares) give
    the target ε; every further honest survivor adds its own noise share, so more survivors mean
    more noise in the sum and an ε below the target."""
    c, t = cfg.colluders, cfg.min_survivors
    honest = f"{t - c} honest clients" if c else f"{t} clients"
    if survivors > t:
        return (
            f"epsilon {epsilon:.4g} is below the target {cfg.epsilon:g}: the noise is sized so "
            f"that min-survivors = {t} survivors give the target (each noise share is sized for "
            f"{honest}); {survivors} survived and each added its share, so the sum carries more "
            "noise than the target needs"
        )
    return (
        f"epsilon {epsilon:.4g} for the target {cfg.epsilon:g}: {survivors} survivors = "
        f"min-survivors, the number the noise is sized for (each share for {honest}; the "
        "calibration rounds toward more noise)"
    )


def summary_line(result: Mapping[str, Any]) -> str:
    """A human-readable account of a release: the selected configuration, its candidate index,
    the whole round's ε and why it differs from the target."""
    return (
        f"DP-HYPE selected configuration {json.dumps(result['selected_configuration'])} "
        f"(candidate {result['selected']} of 0..{result['candidates'] - 1}); whole round: "
        f"epsilon = {result['epsilon']:.4g} at delta = {result['delta']:g} "
        f"({result['neighbours']} neighbours, client level). {result['epsilon_note']}."
    )


def result_line(result: Mapping[str, Any]) -> str:
    """The one line the ServerApp prints (parsed by tests and scripts)."""
    return "DPTUNE_RESULT " + json.dumps(result, sort_keys=True)


def refusal_line() -> str:
    """The line the ServerApp prints instead of :func:`result_line` when the round ends in
    ``NoRelease`` (too few survivors, or a secret that cannot be reconstructed or fails its
    check): nothing is released, not even which stage or client failed."""
    return "DPTUNE_REFUSED " + json.dumps({"error": "NoRelease", "released": None})


# ------------------------------------------------------------------------------------------------
# In-process run (same code, direct calls instead of Flower messages)


def run_in_process(
    run_config: Mapping[str, Any],
    node_configs: Sequence[Mapping[str, Any]],
    *,
    drop_after: Optional[Mapping[int, int]] = None,
) -> Dict[str, Any]:
    """Runs one DP-HYPE round with ``len(node_configs)`` clients in this process.
    ``drop_after[sid] = s`` makes client ``sid`` answer stages < s only (a crash before stage s).
    """
    cfg = RoundConfig.from_run_config(run_config)
    evaluate = load_evaluate(cfg.evaluate)
    drop_after = dict(drop_after or {})
    rnd = ServerRound(cfg, list(range(len(node_configs))))
    states: List[Dict[str, Any]] = [{} for _ in node_configs]
    for stage in range(STAGES):
        replies = []
        for sid, msg in rnd.outgoing().items():
            if drop_after.get(sid, STAGES) <= stage:
                continue
            ctx = _Ctx(node_configs[sid], run_config)
            part = int(node_configs[sid].get("partition-id", sid))
            replies.append(
                (sid, client_step(cfg, stage, sid, msg, states[sid], evaluate, ctx, part))
            )
        rnd.collect(replies)
        if stage < STAGES - 1:
            rnd.advance()
    return rnd.finish()


class _Ctx:
    """A minimal stand-in for Flower's Context (node_config and run_config only)."""

    def __init__(self, node_config, run_config):
        self.node_config = dict(node_config)
        self.run_config = dict(run_config)
