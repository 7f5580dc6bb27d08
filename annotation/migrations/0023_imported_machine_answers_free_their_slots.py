"""Imported machine answers give back the slots they took.

``importresponses --source model`` (or ``adjudicator``) took a slot per answer, while the
model runner's answers took none; the slot rule (``populations.keeps_slot``) now says a
model rater's or an adjudicator's answer keeps none, whatever path stored it. Items whose
counters still hold such answers get those slots back (an imported answer's page is
written answered, so each one took exactly one)."""

from django.db import migrations
from django.db.models import Count, F

NOT_HUMAN = ("model", "adjudicator")


def free_imported_machine_slots(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    Response = apps.get_model("annotation", "Response")
    held = (
        Response.objects.filter(imported=True, participant__source__in=NOT_HUMAN)
        .values("item_id")
        .annotate(n=Count("id"))
    )
    for row in held:
        Item.objects.filter(pk=row["item_id"], slots_taken__gte=row["n"]).update(
            slots_taken=F("slots_taken") - row["n"]
        )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0022_platform_claims_and_bounds")]

    operations = [migrations.RunPython(free_imported_machine_slots, migrations.RunPython.noop)]
