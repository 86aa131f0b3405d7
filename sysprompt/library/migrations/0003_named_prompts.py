# Named prompts: an agent host's instance override becomes per (host, prompt). The
# table is rebuilt with an id; every stored override is kept, as the prompt default's.

import django.db.models.deletion
from django.apps.registry import Apps
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.utils import timezone


def overrides_copy(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    now = timezone.now()  # made by sysprompt 0006; again if the rows were flushed since
    default, _ = apps.get_model("sysprompt", "Prompt").objects.get_or_create(
        name="default", defaults={"created_at": now, "updated_at": now}
    )
    old = apps.get_model("library", "HostOverrideOld")  # type: ignore[misc]  # renamed here
    new = apps.get_model("library", "HostOverride")
    new.objects.bulk_create(
        new(
            user_id=row.user_id,
            prompt=default,
            override=row.override,
            updated_at=row.updated_at,
            updated_by_id=row.updated_by_id,
        )
        for row in old.objects.order_by("user_id")
    )


def content_type_keep(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The rebuilt table's model keeps its content type (and so the permissions groups
    hold): the rename above renamed it with the old table; name it back."""
    content_types = apps.get_model("contenttypes", "ContentType").objects
    if not content_types.filter(app_label="library", model="hostoverride").exists():
        content_types.filter(app_label="library", model="hostoverrideold").update(
            model="hostoverride"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("library", "0002_version_based_on"),
        ("sysprompt", "0006_named_prompts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameModel(old_name="HostOverride", new_name="HostOverrideOld"),
        migrations.CreateModel(
            name="HostOverride",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "override",
                    models.JSONField(blank=True, help_text="As given; null: none.", null=True),
                ),
                ("updated_at", models.DateTimeField()),
                (
                    "user",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "prompt",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="sysprompt.prompt",
                    ),
                ),
                (
                    "updated_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("user", "prompt"), name="library_hostoverride_unique"
                    )
                ],
            },
        ),
        migrations.RunPython(overrides_copy, migrations.RunPython.noop),
        migrations.DeleteModel(name="HostOverrideOld"),
        migrations.RunPython(content_type_keep, migrations.RunPython.noop),
    ]
