"""What researchers write and change: study files (``studies``, ``study_extras``,
``exam_settings``, ``guides``, ``validation``), items (``item_files``, ``items_upload``,
``item_load``), the builder, answers collected elsewhere (``answer_imports``), the lists a
user sends checked row by row (``input_rows``), invitations, uploads kept between a form's
rounds (``kept_files``) and the study's settings, test runs, jobs and exports started for a
researcher (``study_changes``). The top room: it may import every room below."""
