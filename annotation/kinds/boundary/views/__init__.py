"""The game's pages: the round's steps (``rounds``, the kind's ``urls``) and the public
``/play/`` pages (``game``)."""
