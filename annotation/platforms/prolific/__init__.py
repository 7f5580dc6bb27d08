"""Prolific through its API: the client (token, HTTP) and the calls (publish, review, pay)."""
