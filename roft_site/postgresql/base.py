"""Django's PostgreSQL backend, refusing an integer its column cannot hold.

Under psycopg 3 with server-side binding (``roft_site/settings.py``) Django sends each
integer field's value as psycopg's ``Int4``/``Int8``/``Int2``, whose binary form keeps only
the low 32 (64, 16) bits: 4,294,967,297 cents reached an ``integer`` column as 1 cent, with
no error. Plain psycopg, Django's raw cursor and every other path raise "integer out of
range" for the same value. This is the one place that makes the ORM say so too, for every
integer field of every model (``save()``, ``QuerySet.update()``, ``bulk_create``): a value
outside the column's range raises ``DataError`` naming the value and the column type, and
nothing is written. Entry points still bound their own inputs with a message for a person
(``annotation.numbers.whole_number``); this is the net under them.
"""

from __future__ import annotations

from django.db import DataError
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def adapt_integerfield_value(self, value, internal_type):
        if value is not None and not hasattr(value, "resolve_expression"):
            low, high = self.integer_field_range(internal_type)
            if not low <= value <= high:
                raise DataError(
                    f"{value} is out of range for a {internal_type} column ({low} to {high}); "
                    "nothing was written."
                )
        return super().adapt_integerfield_value(value, internal_type)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
