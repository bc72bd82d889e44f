"""DP-HYPE on Flower 1.42 (Message API) with dptune's secure aggregation and distributed noise.

* :mod:`dptune.flower.server_app` — ``app``: a ``ServerApp`` that runs one DP-HYPE round (five
  secure-aggregation stages) and prints one ``DPTUNE_RESULT {...}`` line with the selected index
  and configuration (``selected_configuration``) and the client-level guarantee for the actual
  number of survivors (not their identities), then a readable summary that explains an ε below
  the target (``epsilon_note``: the noise is sized for ``min-survivors``; each further survivor
  adds its share).
* :mod:`dptune.flower.client_app` — ``app``: a ``ClientApp`` whose local evaluation is the
  function named by the run config key ``evaluate-fn`` (``module:function``, default
  :func:`dptune.flower.demo.evaluate`); :func:`make_client_app` builds one around your own
  function.
* :func:`run_in_process` — the same protocol code without Flower.

Run config keys: ``candidates``, ``k``, ``epsilon``, ``delta``, ``min-nodes`` (n, SecAgg
participants), ``min-survivors`` (t: the noise is sized so that any t survivors give the
guarantee; fewer and nothing is released; the Shamir threshold is max(t, ⌊n/2⌋ + 1), so with
t ≤ n/2 a round needs ⌊n/2⌋ + 1 clients at every stage), ``colluders`` (c, default 0: the guarantee holds
against at most c colluding survivors, who know their own noise shares; each share is sized for
t − c honest clients; the released ``assumption`` states it; refused unless
2 × threshold > n + c, the condition under which secure aggregation resists a server that
colludes with c clients and lies about who survived), ``neighbours`` (``replace``),
``stage-timeout`` (seconds), ``eval-deadline`` (seconds a client gives its local evaluation,
below the stage timeout, default half of it: a late evaluation is replaced by a vote for k
candidates drawn uniformly at random, so a slow client never becomes a dropout),
``pad-to-deadline`` (true: every client answers stage 0 at the deadline, so the server cannot
time the evaluation; default false), ``round``, ``evaluate-fn``, ``configurations-fn``
(``module:function`` returning the public configuration of each candidate, default
:func:`dptune.flower.demo.configurations`), and ``seed`` (research runs only: a
seed in the run config is visible to the SuperLink and every node, so the noise is **not
private**; omit it in real use).

The compiled extension is not part of a FAB: ``pip install`` dptune into the environment of the
SuperLink and of every SuperNode.
"""

from ._protocol import RoundConfig, run_in_process

__all__ = ["RoundConfig", "run_in_process", "make_client_app"]


def make_client_app(evaluate):
    """A Flower ``ClientApp`` running DP-HYPE with ``evaluate(candidates, context) -> scores``
    as the local evaluation."""
    from .client_app import build

    return build(evaluate)
