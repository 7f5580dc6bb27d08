# Written by hand: the item trigger of 0003 watches the human subset's columns too (the
# reports read an item's logged inclusion probability and draw: scoring/reports/hybrid.py).

from django.db import migrations

BEFORE = (
    "id, study_id, external_id, payload, is_attention_check, gold, explanation, provenance, "
    "shuffle_key, created_at"
)
WATCHED = f"{BEFORE}, for_humans, human_inclusion"


def _trigger(columns: str) -> str:
    old = ", ".join(f"OLD.{column.strip()}" for column in columns.split(","))
    new = ", ".join(f"NEW.{column.strip()}" for column in columns.split(","))
    return f"""
DROP TRIGGER IF EXISTS scoring_item_changed ON annotation_item;
CREATE TRIGGER scoring_item_changed AFTER UPDATE OF {columns} ON annotation_item
FOR EACH ROW WHEN (({old}) IS DISTINCT FROM ({new})) EXECUTE FUNCTION scoring_item_changed();
"""


def watch_more(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_trigger(WATCHED))


def watch_fewer(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_trigger(BEFORE))


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0004_authentic_population"),
        ("annotation", "0029_human_subset"),
    ]

    operations = [migrations.RunPython(watch_more, watch_fewer)]
