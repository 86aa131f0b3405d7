"""The header's prompt switcher (``{% prompt_switcher %}`` in base.html): shown only
when a prompt other than ``default`` exists, so a deployment with only ``default``
looks as it did before prompts had names."""

from __future__ import annotations

from typing import Any

from django import template

from sysprompt.editor.scoping import page_name, scoped_url, url_prompt
from sysprompt.prompts.catalog_selectors import prompt_names, prompts_exist_beyond_default
from sysprompt.prompts.permissions import TEMPLATE_EDIT_PERMISSION

register = template.Library()

SWITCHER_SIZE = 200


@register.inclusion_tag("editor/_prompt_switcher.html", takes_context=True)
def prompt_switcher(context: template.Context) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not prompts_exist_beyond_default():
        return {"shown": False}
    current = url_prompt(request)
    names = prompt_names(limit=SWITCHER_SIZE)
    if current not in names:
        names = [current, *names]
    return {
        "shown": True,
        "current": current,
        "names": names,
        "more": len(names) >= SWITCHER_SIZE,
        "catalog": user.has_perm(TEMPLATE_EDIT_PERMISSION),
        "page": page_name(request),
    }


@register.simple_tag(takes_context=True, name="scoped_url")
def scoped_url_tag(context: template.Context, name: str, *args: object) -> str:
    """``{% scoped_url "releases-create" %}``: the page's URL for the prompt the current
    URL names (today's URL for ``default``)."""
    return scoped_url(name, url_prompt(context.get("request")), *args)


@register.simple_tag(takes_context=True)
def current_page(context: template.Context) -> str:
    """The current URL's name without the ``prompt-`` prefix, for the header's marks."""
    return page_name(context.get("request"))
