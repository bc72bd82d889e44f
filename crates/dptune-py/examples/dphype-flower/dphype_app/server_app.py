"""ServerApp: one DP-HYPE round with dptune's secure aggregation."""

from dptune.flower.server_app import app

__all__ = ["app"]
