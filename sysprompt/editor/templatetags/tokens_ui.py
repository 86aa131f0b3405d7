"""Token counts as the pages show them: ``{% load tokens_ui %}``.

* ``{{ count|tokens }}`` — a :class:`sysprompt_core.tokens.TokenCount` as
  ``1,234 tokens`` (exact) or ``≈1,234 tokens`` (an estimate), in a ``span`` whose
  tooltip says which (``TokenCount.note``: "estimate: anthropic has no public offline
  tokenizer; …") and whose ``data-tokens`` and ``data-exact`` carry the figure;
* ``{{ count|tokens_short }}`` — the same with the number alone (``≈1,234``), for
  columns headed "tokens".

One look everywhere (the preview, the impact report, the conversations, the library):
docs/tokens.md, "How sizes are shown".
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from sysprompt_core.tokens import TokenCount

register = template.Library()


def _span(count: TokenCount, text: str) -> SafeString:
    return format_html(
        '<span class="token-count{}" title="{}" data-tokens="{}" data-exact="{}">{}</span>',
        "" if count.exact else " is-estimate",
        count.note,
        count.tokens,
        "true" if count.exact else "false",
        text,
    )


@register.filter
def tokens(count: TokenCount | None) -> str:
    if count is None:
        return ""
    unit = "token" if count.tokens == 1 else "tokens"
    return _span(count, f"{count.short} {unit}")


@register.filter
def tokens_short(count: TokenCount | None) -> str:
    if count is None:
        return ""
    return _span(count, count.short)
