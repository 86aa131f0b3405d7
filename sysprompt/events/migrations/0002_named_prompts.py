# Named prompts: an audit record names the prompt it is about (empty for records stored
# before, and for deployment-wide ones); a subscription may name the prompts whose
# events it wants (empty: all, as before).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("events", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="auditrecord",
            name="prompt",
            field=models.CharField(
                blank=True,
                editable=False,
                help_text="The prompt's name at the time; empty: deployment-wide (fragments, users).",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="webhook",
            name="prompts",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text='Prompt names or folders ("support/") whose events it receives; empty: all (events of no prompt, such as a fragment\'s, always).',
            ),
        ),
        migrations.AddIndex(
            model_name="auditrecord",
            index=models.Index(fields=["prompt", "id"], name="events_audit_prompt_id_idx"),
        ),
    ]
