"""Token counts as the pages show them: ``{% load tokens_ui %}``.

* ``{{ count|tokens }}`` — a :class:`sysprompt_core.tokens.TokenCount` as
  ``1,234 tokens`` (exact), ``≈1,234 tokens`` (an estimate) or ``tokens unavailable``
  (the text could not be counted), in a ``span`` whose tooltip says which
  (``TokenCount.note``: "estimate: anthropic has no public offline tokenizer; …",
  "unavailable: tiktoken failed …") and whose ``data-tokens`` (empty when unavailable)
  and ``data-exact`` carry the figure;
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
    kind = " is-unavailable" if count.tokens is None else " is-estimate" if count.estimated else ""
    return format_html(
        '<span class="token-count{}" title="{}" data-tokens="{}" data-exact="{}">{}</span>',
        kind,
        count.note,
        "" if count.tokens is None else count.tokens,
        "true" if count.exact else "false",
        text,
    )


@register.filter
def tokens(count: TokenCount | None) -> str:
    if count is None:
        return ""
    if count.tokens is None:
        return _span(count, count.label())
    unit = "token" if count.tokens == 1 else "tokens"
    return _span(count, f"{count.short} {unit}")


@register.filter
def tokens_short(count: TokenCount | None) -> str:
    if count is None:
        return ""
    return _span(count, count.short)
