"""Counterfactual simulatability (seed 001, steps 1–2): explanations, follow-up questions, the
explaining model's answers to them, and the ``simulation`` / ``plausibility`` items built from them.

``questions`` reads the question file, ``prompts`` renders the versioned prompt files,
``parsing`` reads answers out of generated text, ``dedup`` removes repeated follow-ups,
``records`` runs the three model steps into the database, ``study`` builds the items.
Only ``records`` (through ``workers.lm``) imports torch, and only when a model runs.
"""
