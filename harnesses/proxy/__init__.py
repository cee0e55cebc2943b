"""The model proxy between an agent CLI in its sandbox and the provider (see server.py)."""
