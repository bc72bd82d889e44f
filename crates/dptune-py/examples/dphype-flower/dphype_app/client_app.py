"""ClientApp: the local evaluation is the run config's `evaluate-fn` (module:function)."""

from dptune.flower.client_app import app

__all__ = ["app"]
