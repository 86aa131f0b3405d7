# A prompt's newest template version in one index probe: version numbers count across
# the deployment, so without (prompt, number) PostgreSQL walked the number index
# backwards past every other prompt's versions (benchmarks/prompts_first_turn.py).

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sysprompt", "0006_named_prompts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="templateversion",
            index=models.Index(fields=["prompt", "-number"], name="sysprompt_version_prompt_idx"),
        ),
    ]
