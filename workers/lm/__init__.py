"""Causal language models for the workers: loading, batched seeded generation, scoring.

``registry`` is plain Python (a name → local path table). The other modules import torch
and transformers at the top: only the workers' task bodies and commands import them, never
the web process.
"""
