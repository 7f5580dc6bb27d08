"""Validating many values with one serializer instance while a bulk load runs.

DRF builds a serializer's fields anew for every instance (a deep copy of each declared
field, nested serializers included): two thirds of the 3 ms it took to check one item of
an items file, so a million items took the better part of an hour. Inside
``reused_serializers()`` (a bulk load: ``loaditems``, the items upload) the instance for a
serializer class is built once and validates each value in turn, as DRF's own ``ListField``
reuses its child for every element. Outside it, every call builds its own instance, as before.
The rules are the serializers' either way: only their cost changes.

Each value is validated under its own context, set on the instance before it runs: an item's
gold is checked against that item, which is new for every item (keyed by the context's values,
as this was at first, every gold made a serializer of its own, kept until the load ended: more
CPU than none at all, and memory for each item of the file). The fields read the context
through the serializer at validation time (DRF's ``Field.context`` is the root's), and no
serializer here builds its fields from its context, so one instance serves every context.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_scope = threading.local()  # a web thread's load never shares instances with another's


@contextmanager
def reused_serializers() -> Iterator[None]:
    """Reuse serializer instances (per class and context) until the block ends; nested
    blocks share the outermost one's."""
    if getattr(_scope, "instances", None) is not None:
        yield
        return
    _scope.instances = {}
    try:
        yield
    finally:
        _scope.instances = None


def validated(serializer_class, data: object, context: dict | None = None):
    """``data`` validated by ``serializer_class`` (a serializer class, or a callable that
    builds one from ``data=``) with ``context``: its ``validated_data``, or DRF's
    ``ValidationError`` with the errors ``is_valid`` would give."""
    instances: dict | None = getattr(_scope, "instances", None)
    if instances is None or not isinstance(serializer_class, type) or not isinstance(data, dict):
        # outside a load, or a non-object (it keeps is_valid's own error shape)
        serializer = serializer_class(data=data, **({} if context is None else {"context": context}))
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
    serializer = instances.get(serializer_class)
    if serializer is None:
        serializer = instances[serializer_class] = serializer_class()
    serializer._context = context or {}  # what DRF's __init__ sets from context=, read by every field
    return serializer.run_validation(data)
