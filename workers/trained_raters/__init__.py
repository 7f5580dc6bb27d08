"""Trained raters: encoders fine-tuned on a study's human answers, measured on held-out
items, answering new items as model participants (``docs/workers.md``, "Trained raters").

``questions`` (what a rater reads and answers, per kind), ``model`` (torch: the encoder
and its head), ``training`` (``train_rater``), ``rating`` (``rate``). Only ``model``
imports torch, and only when called.
"""
