# Named prompts: suites and runs belong to a prompt; every one stored so far belongs to
# "default". Suite names become unique per prompt.

import django.db.models.deletion
from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.utils import timezone


def default_assign(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    now = timezone.now()  # made by sysprompt 0006; again if the rows were flushed since
    default, _ = apps.get_model("sysprompt", "Prompt").objects.get_or_create(
        name="default", defaults={"created_at": now, "updated_at": now}
    )
    for name in ("Suite", "Run"):
        apps.get_model("evaluations", name).objects.filter(prompt__isnull=True).update(
            prompt=default
        )


def prompt_field(related_name: str, *, null: bool) -> models.ForeignKey:  # type: ignore[type-arg]
    return models.ForeignKey(
        null=null,
        editable=False,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="sysprompt.prompt",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0002_run_plan_and_spend"),
        ("sysprompt", "0006_named_prompts"),
    ]

    operations = [
        migrations.AddField(
            model_name="suite", name="prompt", field=prompt_field("suites", null=True)
        ),
        migrations.AddField(model_name="run", name="prompt", field=prompt_field("runs", null=True)),
        migrations.RunPython(default_assign, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="suite", name="prompt", field=prompt_field("suites", null=False)
        ),
        migrations.AlterField(
            model_name="run", name="prompt", field=prompt_field("runs", null=False)
        ),
        migrations.AlterField(
            model_name="suite", name="name", field=models.CharField(max_length=63)
        ),
        migrations.AlterModelOptions(name="suite", options={"ordering": ["prompt", "name"]}),
        migrations.AddConstraint(
            model_name="suite",
            constraint=models.UniqueConstraint(
                fields=("prompt", "name"), name="evaluations_suite_name"
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["prompt", "-id"], name="evaluations_run_prompt_idx"),
        ),
    ]
