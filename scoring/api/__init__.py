"""``scoring``'s part of the researchers' API: the stored report rows of a study.

Built on ``annotation.api`` (``ResearcherView``, ``documented``); its routes join
annotation's under ``/api/v1/`` in one namespace (``roft_site/api_urls.py``).
"""
