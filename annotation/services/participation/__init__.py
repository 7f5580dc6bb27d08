"""The participant's path, one writer per row: the gate (``gate``), the hand-out of pages
and the quota (``assignment``, ``capacity``, ``adaptive``, ``attention_schedule``), the answer
(``submission``), who the participant is (``participants``, ``guest_history``), flags and
failed checks (``flags``, ``attention``), qualification exams (``exams``) and leaving
(``exits``). Imports the study-wide rules and ``db`` below it; no other room."""
