"""The Django admin's change form as a test posts it, and the errors of a form it refused."""

from __future__ import annotations

import json
import re

from django.contrib import admin
from django.test import RequestFactory


def admin_form_data(model, obj, superuser, **changes) -> dict:
    """What the admin's change form posts for ``obj`` as it stands, with ``changes``."""
    request = RequestFactory().get("/")
    request.user = superuser
    form = admin.site._registry[model].get_form(request, obj)(instance=obj)
    data = {}
    for name in form.fields:
        value = form[name].value()  # as the page shows it (JSON fields as text)
        if value is None or value is False:
            continue
        data[name] = value
    for name, value in changes.items():
        data[name] = json.dumps(value) if isinstance(value, (dict, list)) else value
    return data


def form_errors(answer) -> str:
    """The error lists of an admin form that was not saved."""
    assert answer.status_code == 200, "the admin saved the form"
    return " | ".join(
        re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', answer.content.decode(), re.S)
    )
