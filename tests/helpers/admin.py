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
    model_admin = admin.site._registry[model]
    for formset_class, _inline in model_admin.get_formsets_with_inlines(request, obj):
        formset = formset_class(instance=obj)  # its rows as they stand, sent back unchanged
        data.update(
            {f"{formset.prefix}-{key}": value for key, value in formset.management_form.initial.items()}
        )
        for row in formset.forms:
            for name in row.fields:
                value = row[name].value()
                if value is not None and value is not False:
                    data[row.add_prefix(name)] = value
        data[f"{formset.prefix}-TOTAL_FORMS"] = len(formset.initial_forms)
    for name, value in changes.items():
        data[name] = json.dumps(value) if isinstance(value, (dict, list)) else value
    return data


def form_errors(answer) -> str:
    """The error lists of an admin form that was not saved."""
    assert answer.status_code == 200, "the admin saved the form"
    return " | ".join(
        re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', answer.content.decode(), re.S)
    )
