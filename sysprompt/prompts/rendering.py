"""Rendering: the current template (or a draft) resolved for a conversation, and lint.

The data flow of a first turn: :func:`prompt_render` parses the template once per
process (:func:`parsed_template`), resolves only the variables the rendering reaches
(``sysprompt_core.variables.resolve_prompt``) within the configured limits, and
answers what construct stores. The preview renders exactly the same way and lists
every referenced variable, capped for display.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from django.apps import apps
from django.utils import timezone

from sysprompt.conf import resolver_options
from sysprompt.errors import InvalidInput
from sysprompt.prompts.apps import PromptsConfig
from sysprompt.prompts.diffs import Diff, text_diff
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.prompts.selectors import (
    Actor,
    ConversationAction,
    CurrentTemplate,
    conversation_check,
    conversation_prompt_visible,
    template_current,
)
from sysprompt.prompts.validation import CheckedCwd, conversation_id_check, cwd_check
from sysprompt_core import template as engine
from sysprompt_core.variables import (
    Missing,
    ResolveContext,
    Value,
    default_registry,
    resolve_prompt,
)


def parsed_template(source: str) -> engine.Template:
    """``source`` parsed, from the app's :class:`ParsedTemplates` when seen before."""
    config = apps.get_app_config("sysprompt")
    assert isinstance(config, PromptsConfig)
    return config.parsed_templates.get(source)


@dataclass(frozen=True)
class Rendered:
    """A prompt rendered for a conversation: what construct stores, what preview shows."""

    prompt: str | None
    sha256: str | None
    template: CurrentTemplate
    cwd: str
    model: str
    rendered_at: datetime
    values: dict[str, Value]


def prompt_render(
    *,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    template: CurrentTemplate | None = None,
    resolve_all: bool = False,
) -> Rendered:
    """Render ``template`` (default: the current one) for a conversation in ``cwd``.

    ``cwd`` is what :func:`cwd_check` returned (a plain string is checked here): the
    resolvers work in its checked real path. Only what the rendering reaches is
    resolved, unless ``resolve_all`` asks for every referenced variable (the preview).
    Raises :class:`~sysprompt_core.template.PromptTooLarge` when the template's literal text
    alone is over ``MAX_PROMPT_BYTES``.
    """
    checked = cwd if isinstance(cwd, CheckedCwd) else cwd_check(cwd)
    chosen = template_current() if template is None else template
    now = timezone.now()
    context = ResolveContext(
        cwd=str(checked),
        model=model or None,
        conversation_id=conversation_id,
        now=now,
        options=resolver_options(),
        directory=checked.real,
    )
    resolution = resolve_prompt(parsed_template(chosen.text), context, default_registry())
    values = resolution.values.resolve_all() if resolve_all else resolution.values.looked_up()
    prompt = resolution.prompt
    digest = None if prompt is None else hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    return Rendered(
        prompt=prompt,
        sha256=digest,
        template=chosen,
        cwd=str(checked),
        model=model,
        rendered_at=now,
        values=values,
    )


@dataclass(frozen=True)
class Preview:
    """What the editor shows: the prompt construct would store, lint, every value."""

    rendered: Rendered
    diagnostics: list[engine.Diagnostic]


# What a preview shows of the values: each at most this many characters, all of them
# together at most this many; a value equal to an earlier one is shown once.
PREVIEW_VALUE_CHARS = 4_096

PREVIEW_SECTION_CHARS = 262_144


@dataclass(frozen=True)
class PreviewVariable:
    """One variable as a preview shows it.

    ``value`` is the shown part (``None``: it does not exist, see ``reason``; ``""``
    with ``same_as``: the same value as that earlier key); ``omitted`` counts the
    characters left out by the caps."""

    key: str
    value: str | None
    reason: str | None = None
    omitted: int = 0
    same_as: str | None = None


def preview_variables(values: Mapping[str, Value]) -> list[PreviewVariable]:
    """``values`` by key, each distinct value once and within the preview's caps."""
    first_key: dict[str, str] = {}
    left = PREVIEW_SECTION_CHARS
    shown: list[PreviewVariable] = []
    for key, value in sorted(values.items()):
        if isinstance(value, Missing):
            shown.append(PreviewVariable(key, None, reason=value.reason))
        elif (earlier := first_key.get(value)) is not None:
            shown.append(PreviewVariable(key, "", same_as=earlier))
        else:
            first_key[value] = key
            part = value[: min(PREVIEW_VALUE_CHARS, left)]
            left -= len(part)
            shown.append(PreviewVariable(key, part, omitted=len(value) - len(part)))
    return shown


def template_preview(
    *,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    template: str | None = None,
) -> Preview:
    """Render ``template`` (default: the current one) exactly as construct would.

    Every referenced variable is resolved so the editor can show its value; nothing
    is stored.
    """
    cwd = cwd_check(cwd)
    if conversation_id is not None:
        conversation_id_check(conversation_id)
    chosen = template_current() if template is None else _draft(template)
    rendered = prompt_render(
        cwd=cwd, model=model, conversation_id=conversation_id, template=chosen, resolve_all=True
    )
    return Preview(rendered=rendered, diagnostics=template_lint(chosen.text))


def template_lint(text: str) -> list[engine.Diagnostic]:
    """``lint`` with the registered variable types and names as its vocabulary."""
    return engine.lint(text, default_registry().vocabulary())


def _draft(text: str) -> CurrentTemplate:
    return CurrentTemplate(text=text, version=0, updated_at=None, author=None)


@dataclass(frozen=True)
class CompactionPreview:
    """What ``compact`` would store now for a conversation, or why it cannot be shown."""

    stored: ConversationPrompt
    fresh: Rendered | None
    problem: str | None
    diff: Diff | None


def conversation_compaction_preview(conversation_id: str, *, user: Actor) -> CompactionPreview:
    """:func:`compaction_preview` of a conversation ``user`` may construct (it resolves
    variables: reads files, runs git); :class:`ConversationNotFound` or
    :class:`ConversationForbidden` otherwise, before anything is resolved."""
    stored = conversation_prompt_visible(conversation_id, user=user)
    conversation_check(stored, user=user, action=ConversationAction.CHANGE)
    return compaction_preview(stored)


def compaction_preview(stored: ConversationPrompt) -> CompactionPreview:
    """Render the current template for ``stored``'s cwd and model; persist nothing.

    Checks no permission: callers go through :func:`conversation_compaction_preview`.
    """
    try:
        cwd = cwd_check(stored.cwd)
    except InvalidInput as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=exc.message, diff=None)
    try:
        fresh = prompt_render(cwd=cwd, model=stored.model, conversation_id=stored.conversation_id)
    except engine.PromptTooLarge as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=str(exc), diff=None)
    diff = text_diff(stored.system_prompt, fresh.prompt)
    return CompactionPreview(stored=stored, fresh=fresh, problem=None, diff=diff)
