"""Automatic raters that answer a study's items as model participants.

``prompts`` builds the prompt of one closed question (the study's instructions, few-shot
examples from people's answers to other items, the page's text, the allowed answers) and
parses free text back into an allowed answer; ``scoring`` reads a causal LM's
log-probabilities of each allowed answer; ``llm`` runs a whole study through them and
stores the answers with ``annotation.services.analysis.model_answers``.
"""
