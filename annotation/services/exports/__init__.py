"""Writing a study out: the export job and its parameters (``export``), the columns every
export shares (``columns``), the SELECTs over them and how their rows leave the database
(``selects``), the standalone SQLite dump (``sqlite``). Imports ``jobs``, ``db.pgcopy`` and
the study-wide rules, never ``analysis``."""
