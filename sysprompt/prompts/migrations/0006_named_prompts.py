# Named prompts: every deployment gets the prompt "default", and everything that was the
# one template's (its versions, the conversations) becomes default's, with no step by the
# operator. Conversation ids become unique per agent host (the owner), not per deployment;
# every stored row is kept as it was.

import django.db.models.deletion
from django.apps.registry import Apps
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.utils import timezone


def default_create(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The prompt "default", and every version and conversation stored so far in it."""
    prompt_model = apps.get_model("sysprompt", "Prompt")
    now = timezone.now()
    default, _ = prompt_model.objects.get_or_create(
        name="default", defaults={"created_at": now, "updated_at": now}
    )
    for name in ("TemplateVersion", "ConversationPrompt"):
        apps.get_model("sysprompt", name).objects.filter(prompt__isnull=True).update(prompt=default)


def prompt_field(related_name: str, *, null: bool) -> models.ForeignKey:  # type: ignore[type-arg]
    return models.ForeignKey(
        null=null,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="sysprompt.prompt",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("sysprompt", "0005_conversationprompt_label_release_arm"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Prompt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
                ("description", models.TextField(blank=True)),
                ("tags", models.JSONField(blank=True, default=list, help_text="Short strings.")),
                (
                    "archived",
                    models.BooleanField(
                        default=False,
                        help_text="Hidden from lists; new conversations are refused (410).",
                    ),
                ),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField()),
                (
                    "editor_groups",
                    models.ManyToManyField(
                        blank=True,
                        help_text="Only members (and superusers) may change it; empty: its folders decide.",
                        related_name="+",
                        to="auth.group",
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
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="PromptAlias",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
                ("created_at", models.DateTimeField()),
                (
                    "prompt",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="aliases",
                        to="sysprompt.prompt",
                    ),
                ),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="FolderRestriction",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("folder", models.CharField(max_length=200, unique=True)),
                ("updated_at", models.DateTimeField()),
                (
                    "editor_groups",
                    models.ManyToManyField(blank=True, related_name="+", to="auth.group"),
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
            options={"ordering": ["folder"]},
        ),
        migrations.CreateModel(
            name="HostPrompts",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "allowed",
                    models.JSONField(
                        blank=True,
                        help_text='Names or folders ("support/"); null: every prompt.',
                        null=True,
                    ),
                ),
                ("updated_at", models.DateTimeField()),
                (
                    "default",
                    models.ForeignKey(
                        blank=True,
                        help_text="Empty: the prompt named default.",
                        null=True,
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
        ),
        migrations.AddField(
            model_name="templateversion", name="prompt", field=prompt_field("versions", null=True)
        ),
        migrations.AddField(
            model_name="conversationprompt",
            name="prompt",
            field=prompt_field("conversations", null=True),
        ),
        migrations.RunPython(default_create, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="templateversion",
            name="prompt",
            field=models.ForeignKey(
                editable=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="versions",
                to="sysprompt.prompt",
            ),
        ),
        migrations.AlterField(
            model_name="conversationprompt",
            name="prompt",
            field=prompt_field("conversations", null=False),
        ),
        migrations.RemoveIndex(model_name="conversationprompt", name="sysprompt_conv_label_at_idx"),
        migrations.AlterField(
            model_name="conversationprompt",
            name="conversation_id",
            field=models.CharField(max_length=200),
        ),
        migrations.AddIndex(
            model_name="conversationprompt",
            index=models.Index(fields=["conversation_id"], name="sysprompt_conv_id_idx"),
        ),
        migrations.AddIndex(
            model_name="conversationprompt",
            index=models.Index(
                fields=["prompt", "label", "constructed_at"], name="sysprompt_conv_label_idx"
            ),
        ),
        migrations.AddConstraint(
            model_name="conversationprompt",
            constraint=models.UniqueConstraint(
                fields=("owner", "conversation_id"), name="sysprompt_conv_owner_id_unique"
            ),
        ),
    ]
