"""`kernelarena serve`: the live leaderboard, per-kernel pages, transcript viewer and plots in the
browser. Needs the `web` extra (starlette, uvicorn, plotly); `command.py` says so in one line when
it is missing, and nothing here is imported by the rest of the CLI until `serve` runs."""
