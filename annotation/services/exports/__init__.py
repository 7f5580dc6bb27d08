"""Writing a study out: the export job and its parameters (``export``), the columns and the
SQL that produces them (``columns``), the standalone SQLite dump (``sqlite``). Imports
``jobs``, ``db.pgcopy`` and the study-wide rules, never ``analysis``."""
