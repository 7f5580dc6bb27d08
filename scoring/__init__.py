"""The Django app that reads a study's responses from the database, computes its reports
with the pure functions in ``stats`` and stores them as ``Report`` rows; the dashboard,
the reports job and the reports API read those rows.

It reads ``annotation``'s models and services; ``annotation`` does not import it (see
``docs/architecture.md``).
"""
