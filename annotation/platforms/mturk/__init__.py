"""Mechanical Turk through boto3: the client (credentials, endpoint) and the calls (publish, review, pay)."""
