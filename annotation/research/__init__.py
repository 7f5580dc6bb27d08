"""The researchers' face: the pages under ``/research/`` and their URLs."""
