"""Each version records which shipped text it started from (``based_on``), so "newer
default available" flags only a variant whose shipped default changed after a person's
edit, not every edited variant.

Existing histories are filled in the way new versions are written: an installer's
version (``source`` default) started from its own text; a person's or an import's
carries on from the version before it ("" when it is the first).
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import migrations, models

_BATCH = 500


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fill_based_on(apps: Any, schema_editor: Any) -> None:
    versions = apps.get_model("library", "FragmentVersion")
    ordered = versions.objects.order_by("fragment_id", "provider", "model", "number").only(
        "pk", "fragment_id", "provider", "model", "text", "source"
    )
    variant: tuple[int, str, str] | None = None
    based_on = ""
    changed = []
    for version in ordered.iterator(chunk_size=_BATCH):
        key = (version.fragment_id, version.provider, version.model)
        if key != variant:
            variant, based_on = key, ""
        if version.source == "default":
            based_on = _digest(version.text)
        if based_on:
            version.based_on = based_on
            changed.append(version)
        if len(changed) >= _BATCH:
            versions.objects.bulk_update(changed, ["based_on"])
            changed = []
    if changed:
        versions.objects.bulk_update(changed, ["based_on"])


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="fragmentversion",
            name="based_on",
            field=models.CharField(
                blank=True,
                editable=False,
                help_text='SHA-256 of the shipped text this version\'s text started from; "": none.',
                max_length=64,
            ),
        ),
        migrations.RunPython(fill_based_on, migrations.RunPython.noop, elidable=True),
    ]
