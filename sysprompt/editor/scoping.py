"""Pages scoped to one prompt: today's URLs (``/releases/``) are ``default``'s, and the
same pages under ``/editor/p/<name>/-/`` (``/editor/p/support/triage/-/releases/``) are
that prompt's. The URLconf registers each scoped page twice, the second time named
``prompt-<name>`` with a ``prompt`` keyword; :class:`PromptScopedMixin` takes that
keyword off and puts the prompt on the view as ``self.scope``; :func:`scoped_url` (and
``{% scoped_url %}`` in templates) builds a page's URL for a prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import reverse

from sysprompt import errors
from sysprompt.prompts.catalog import prompt_get
from sysprompt_core.prompt_names import DEFAULT_PROMPT

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

SCOPED_PREFIX = "prompt-"
"""The URL name prefix of the pages under ``/editor/p/<name>/-/``."""


def page_prompt(name: str | None) -> Prompt:
    """The prompt a page's URL names (``/editor/p/<name>/-/…``; ``default`` for today's
    URLs): 404 for an unknown name or one that breaks the rule."""
    try:
        return prompt_get(name)
    except (errors.PromptNotFound, errors.InvalidInput) as exc:
        raise Http404(str(exc)) from None


def scoped_url(name: str, prompt: Prompt | str | None, *args: object) -> str:
    """``editor:<name>`` for ``default`` (today's URL), ``editor:prompt-<name>`` under
    ``/editor/p/<prompt>/-/`` for any other prompt."""
    prompt_name = prompt if isinstance(prompt, str) or prompt is None else prompt.name
    if not prompt_name or prompt_name == DEFAULT_PROMPT:
        return reverse(f"editor:{name}", args=args)
    return reverse(f"editor:{SCOPED_PREFIX}{name}", args=[prompt_name, *args])


def url_prompt(request: HttpRequest | None) -> str:
    """The prompt the request's URL names; ``default`` for today's URLs."""
    match = getattr(request, "resolver_match", None)
    return (match.kwargs.get("prompt") if match else None) or DEFAULT_PROMPT


def page_name(request: HttpRequest | None) -> str:
    """The request's URL name without the scoped prefix (``releases``, ``index``)."""
    match = getattr(request, "resolver_match", None)
    name = (match.url_name if match else None) or ""
    return name.removeprefix(SCOPED_PREFIX)


SECTIONS = (
    ("releases", "releases"),
    ("evaluations", "evaluations"),
    ("conversation", "conversations"),
    ("agent-host", "agent-hosts"),
)
"""A page's name starting with the first word belongs to the scoped list page named by the
second; the switcher takes a user to that page of the prompt picked."""


def section_url(page: str, prompt: str) -> str:
    """The page the switcher goes to from ``page`` for ``prompt``: the same section's
    list (Releases, Evaluations, Conversations, Agent hosts), else the prompt's template page."""
    for start, section in SECTIONS:
        if page.startswith(start):
            return scoped_url(section, prompt)
    return scoped_url("index", prompt)


class PromptScopedMixin:
    """Takes the URL's ``prompt`` keyword off before the handler runs and sets
    ``self.scope`` to that prompt (``default`` when the URL names none); 404 for an
    unknown name. List it after the login and permission mixins, so that a visitor who
    may not see the page is refused before any prompt is looked up."""

    scope: Prompt

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        self.scope = page_prompt(kwargs.pop("prompt", None))
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
        return response
