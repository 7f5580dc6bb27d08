"""Statistics as pure functions over arrays and sequences: agreement (Krippendorff's alpha,
kappa, reliability), the per-kind figures (boundary, ranking, likert, claim, simulation),
bootstrap intervals, grouped means, machine-rater and held-out figures.

No Django, no torch, nothing from ``annotation``, ``scoring``, ``workers`` or ``roft_site``:
numpy and scipy only (``choix`` and ``sacrebleu`` where a function needs them). The
``.importlinter`` contracts, checked by ``make test``, hold this package to that; see
``docs/architecture.md``. The Django app that reads responses and stores the figures as
report rows is ``scoring``.

scipy is imported inside the functions that call it, never at the top of a module: the
web app, every Celery worker, each ``manage.py`` run and each test subprocess import
these modules on start-up (through ``scoring`` and ``annotation.kinds``), and
``scipy.stats`` alone costs about a second of CPU there, mostly in processes that never
compute a figure. numpy, which nearly every function uses, stays at the top.
"""
