"""What the editor remembers for a user between visits (``sysprompt.editor.cwds``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EditorPreference(models.Model):
    """One user's editor preferences: the preview's working directories."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    recent_cwds = models.JSONField(
        default=list,
        blank=True,
        help_text=(
            "The working directories this user's previews ran in, newest first (at most "
            "cwds.RECENT_CWDS_MAX): the editor opens on the newest still valid."
        ),
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"editor preferences of user {self.user_id}"
