"""API views, one module per domain; each fetches through ``access_*`` and writes through services."""
