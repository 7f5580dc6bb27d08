"""Input and output shapes of the API, one module per domain."""
