"""The label that always exists: ``production → latest``, protected.

On a fresh install and on an existing one alike, saving stays shipping, exactly as
before releases existed; pointing ``production`` at a release turns review on. The
creation is the label's first move (from nothing), so its history starts here.
"""

from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.utils import timezone

MESSAGE = "Created with the installation: production follows latest (saving is shipping)."


def production_create(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    label_model = apps.get_model("releases", "Label")
    move_model = apps.get_model("releases", "LabelMove")
    if label_model.objects.filter(name="production").exists():
        return
    now = timezone.now()
    label = label_model.objects.create(
        name="production", target="latest", protected=True, created_at=now, updated_at=now
    )
    move_model.objects.create(
        label=label, from_target=None, to_target="latest", at=now, message=MESSAGE
    )


class Migration(migrations.Migration):
    dependencies = [("releases", "0001_initial")]

    operations = [migrations.RunPython(production_create, migrations.RunPython.noop)]
