"""The database below the rules: the participant's hot path's hand-written statements
(``sql_rows``, protected: only five modules of ``participation`` import it) and the bulk reads
and writes of exports, item loads and reports (``pgcopy``). Imports no rule."""
