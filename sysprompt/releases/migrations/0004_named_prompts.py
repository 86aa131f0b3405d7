# Named prompts: releases, labels, test contexts and the agent hosts' labels belong to a
# prompt; every row stored so far belongs to "default". Release numbers and label and
# test context names become unique per prompt. A host's label becomes per (host,
# prompt): its table is rebuilt with an id, and each row kept, as default's.

import django.db.models.deletion
from django.apps.registry import Apps
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.utils import timezone

PER_PROMPT = ("Release", "Label", "TestContext")


def default_assign(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    now = timezone.now()  # made by sysprompt 0006; again if the rows were flushed since
    default, _ = apps.get_model("sysprompt", "Prompt").objects.get_or_create(
        name="default", defaults={"created_at": now, "updated_at": now}
    )
    for name in PER_PROMPT:
        apps.get_model("releases", name).objects.filter(prompt__isnull=True).update(prompt=default)
    old = apps.get_model("releases", "HostLabelOld")  # type: ignore[misc]  # renamed here
    new = apps.get_model("releases", "HostLabel")
    new.objects.bulk_create(
        new(
            user_id=row.user_id,
            prompt=default,
            label_id=row.label_id,
            updated_at=row.updated_at,
            updated_by_id=row.updated_by_id,
        )
        for row in old.objects.order_by("user_id")
    )


def prompt_field(related_name: str, *, null: bool) -> models.ForeignKey:  # type: ignore[type-arg]
    return models.ForeignKey(
        null=null,
        editable=False,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="sysprompt.prompt",
    )


def content_type_keep(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The rebuilt table's model keeps its content type (and so the permissions groups
    hold): the rename above renamed it with the old table; name it back."""
    content_types = apps.get_model("contenttypes", "ContentType").objects
    if not content_types.filter(app_label="releases", model="hostlabel").exists():
        content_types.filter(app_label="releases", model="hostlabelold").update(model="hostlabel")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("releases", "0003_label_gate"),
        ("sysprompt", "0006_named_prompts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="hostlabel",
            name="label",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="releases.label"
            ),
        ),
        migrations.RenameModel(old_name="HostLabel", new_name="HostLabelOld"),
        migrations.CreateModel(
            name="HostLabel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
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
                    "label",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="hosts",
                        to="releases.label",
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
                        fields=("user", "prompt"), name="releases_hostlabel_unique"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="release", name="prompt", field=prompt_field("releases", null=True)
        ),
        migrations.AddField(
            model_name="label", name="prompt", field=prompt_field("labels", null=True)
        ),
        migrations.AddField(
            model_name="testcontext", name="prompt", field=prompt_field("test_contexts", null=True)
        ),
        migrations.RunPython(default_assign, migrations.RunPython.noop),
        migrations.DeleteModel(name="HostLabelOld"),
        migrations.RunPython(content_type_keep, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="release", name="prompt", field=prompt_field("releases", null=False)
        ),
        migrations.AlterField(
            model_name="label", name="prompt", field=prompt_field("labels", null=False)
        ),
        migrations.AlterField(
            model_name="testcontext", name="prompt", field=prompt_field("test_contexts", null=False)
        ),
        migrations.AlterField(
            model_name="release",
            name="number",
            field=models.PositiveIntegerField(editable=False, help_text="Counted per prompt."),
        ),
        migrations.AlterField(
            model_name="release",
            name="fingerprint",
            field=models.CharField(
                editable=False,
                help_text="SHA-256 of the template version and the variant versions it holds.",
                max_length=64,
            ),
        ),
        migrations.AlterField(
            model_name="label", name="name", field=models.CharField(max_length=63)
        ),
        migrations.AlterField(
            model_name="label",
            name="protected",
            field=models.BooleanField(
                default=False,
                help_text="Moving it needs the permission to publish releases. Whether a name is protected is deployment-wide: every prompt's label of that name says the same.",
            ),
        ),
        migrations.AlterField(
            model_name="testcontext", name="name", field=models.CharField(max_length=63)
        ),
        migrations.AlterModelOptions(name="label", options={"ordering": ["prompt", "name"]}),
        migrations.AlterModelOptions(name="testcontext", options={"ordering": ["prompt", "name"]}),
        migrations.AddConstraint(
            model_name="release",
            constraint=models.UniqueConstraint(
                fields=("prompt", "number"), name="releases_release_number"
            ),
        ),
        migrations.AddConstraint(
            model_name="release",
            constraint=models.UniqueConstraint(
                fields=("prompt", "fingerprint"), name="releases_release_fingerprint"
            ),
        ),
        migrations.AddConstraint(
            model_name="label",
            constraint=models.UniqueConstraint(
                fields=("prompt", "name"), name="releases_label_name"
            ),
        ),
        migrations.AddConstraint(
            model_name="testcontext",
            constraint=models.UniqueConstraint(
                fields=("prompt", "name"), name="releases_testcontext_name"
            ),
        ),
    ]
