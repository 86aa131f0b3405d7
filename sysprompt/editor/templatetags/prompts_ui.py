"""The header's prompt switcher (``{% prompt_switcher %}`` in base.html): shown only
when a prompt other than ``default`` exists, so a deployment with only ``default``
looks as it did before prompts had names."""

from __future__ import annotations

from typing import Any

from django import template

from sysprompt.prompts.catalog_selectors import prompt_names, prompts_exist_beyond_default
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION
from sysprompt_core.prompt_names import DEFAULT_PROMPT

register = template.Library()

SWITCHER_SIZE = 200


@register.inclusion_tag("editor/_prompt_switcher.html", takes_context=True)
def prompt_switcher(context: template.Context) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not prompts_exist_beyond_default():
        return {"shown": False}
    match = getattr(request, "resolver_match", None)
    current = (match.kwargs.get("prompt") if match else None) or DEFAULT_PROMPT
    names = prompt_names(limit=SWITCHER_SIZE)
    if current not in names:
        names = [current, *names]
    return {
        "shown": True,
        "current": current,
        "names": names,
        "more": len(names) >= SWITCHER_SIZE,
        "catalog": user.has_perm(TEMPLATE_EDIT_PERMISSION),
    }
