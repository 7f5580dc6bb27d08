"""Questionnaire responses stored before each response recorded its passages' systems
(``Questionnaire.display_record``) get them now, from their item as it is, so every
response's export names the system of each passage and of each pick alike. The order
kept is the one recorded (the file's order where none was). Nothing else changes."""

from django.db import migrations

BATCH = 2000


def _record(state, passages):
    ids = [p["id"] for p in passages]
    order = (state or {}).get("order")
    order = list(order) if order and sorted(order) == sorted(ids) else ids
    return {**(state or {}), "order": order, "systems": {p["id"]: p.get("system", "") for p in passages}}


def add_systems(apps, schema_editor):
    Response = apps.get_model("annotation", "Response")
    responses = (
        Response.objects.filter(study__kind="questionnaire")
        .exclude(display_order__has_key="systems")
        .select_related("item")
        .only("id", "display_order", "item__payload")
    )
    changed = []
    for response in responses.iterator(chunk_size=BATCH):
        passages = (response.item.payload or {}).get("passages") or []
        response.display_order = _record(response.display_order, passages)
        changed.append(response)
        if len(changed) >= BATCH:
            Response.objects.bulk_update(changed, ["display_order"])
            changed = []
    if changed:
        Response.objects.bulk_update(changed, ["display_order"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0027_authenticity_signals")]

    operations = [migrations.RunPython(add_systems, migrations.RunPython.noop)]
