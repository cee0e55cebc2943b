"""Sweeps, the ledger, the leaderboard, replay, and the `kernelarena` CLI."""
