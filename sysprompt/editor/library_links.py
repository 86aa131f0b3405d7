"""Where a fragment's variant lives in the editor, and how the pages name a variant.

A variant's page is ``/library/<name>`` with ``?provider=&model=`` picking the variant
(none: the default one); its endpoints hang below ``/library/<name>/-/`` (``-`` cannot
start a name segment, so no fragment name ever collides with them).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse


def variant_query(provider: str | None, model: str | None) -> str:
    """``?provider=…&model=…`` for a variant, ``""`` for the default variant."""
    params = {key: value for key, value in (("provider", provider), ("model", model)) if value}
    return f"?{urlencode(params)}" if params else ""


def variant_url(
    view: str,
    name: str,
    provider: str | None = None,
    model: str | None = None,
    *args: object,
) -> str:
    """The URL of ``editor:<view>`` for a variant (``args`` follow the name)."""
    return reverse(f"editor:{view}", args=[name, *args]) + variant_query(provider, model)


def variant_label(provider: str | None, model: str | None) -> str:
    """``default``, ``anthropic`` or ``openai / gpt-5``."""
    if not provider:
        return "default"
    return f"{provider} / {model}" if model else provider
