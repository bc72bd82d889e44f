"""DP-HYPE app: thin wrappers around dptune.flower (installed in the node environments)."""
