"""``{{ when|ago }}``: "just now" under a minute, else Django's ``timesince`` + " ago".

Django's ``timesince`` says "0 minutes" for anything under a minute (and for a time a
little in the future, as a clock skew between servers makes it); people say "just now".
Registered as a template builtin (``config/settings.py``), so every page has it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()

JUST_NOW = timedelta(minutes=1)


@register.filter(expects_localtime=False)
def ago(value: datetime | None) -> str:
    if not isinstance(value, datetime):
        return ""
    now = timezone.now() if timezone.is_aware(value) else datetime.now()
    if now - value < JUST_NOW:
        return "just now"
    return f"{timesince(value, now)} ago"
