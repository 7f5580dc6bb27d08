"""Operations on the domain. Views, tasks and commands call these and stay thin.

Rooms (contract ``services-rooms``: each imports only the rows below it):

- ``authoring/``: what researchers write and change;
- ``analysis/`` | ``exports/``: reading the answers, writing a study out;
- ``participation/`` | ``jobs``: the participant's path; background jobs;
- ``access``: who may see or change what;
- ``populations`` | ``pseudonyms`` | ``study_status``: which answers count, the names shown
  outside, the one writer of a study's status;
- ``db/`` | ``web/``: hand-written SQL and bulk reads; the request's edges.
"""
