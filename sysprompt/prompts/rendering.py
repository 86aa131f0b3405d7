"""Rendering: the current template (or a draft) resolved for a conversation, and lint.

The data flow of a first turn: :func:`prompt_render` parses the template once per
process (:func:`parsed_template`), resolves only the variables the rendering reaches
(``sysprompt_core.variables.resolve_prompt``) within the configured limits, and
answers what construct stores. The preview renders exactly the same way and lists
every referenced variable, capped for display.

Agent hosts (agent-hosts §0, §1): the values the host supplied (``HostContext.values``)
and the host-local types the server resolves itself (``SERVER_RESOLVES``) go into the
``ResolveContext``; the same rendering measures the shared prefix, carried through the
instance and thread overrides (``Rendered.shared_prefix_chars``, and where in the
template it ends, ``Rendered.prefix_end``). :func:`template_references` answers which
references a host should resolve on its side.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from sysprompt.conf import app_settings, resolver_options
from sysprompt.errors import InvalidInput, ResolutionBusy
from sysprompt.library.selectors import (
    DatabaseSource,
    host_override,
    library_source,
    parsed_text,
)
from sysprompt.library.validation import override_valid
from sysprompt.prompts.builds import Build, Chooser, working_copy
from sysprompt.prompts.models import ConversationPrompt, Prompt
from sysprompt.prompts.selectors import (
    Actor,
    ConversationAction,
    CurrentTemplate,
    conversation_check,
    conversation_prompt_visible,
    template_current,
)
from sysprompt.prompts.token_counts import count_tokens, token_ratios
from sysprompt.prompts.validation import (
    DIRECTORY_TYPES,
    CheckedCwd,
    HostContext,
    conversation_id_check,
    cwd_check,
    preset_check,
)
from sysprompt_core import template as engine
from sysprompt_core import tokens
from sysprompt_core.diff import Diff, text_diff
from sysprompt_core.library import (
    FragmentSource,
    FragmentUse,
    Layered,
    Override,
    choose_variant,
    compress,
    layered_prompt,
    library_lint,
    reachable_references,
)
from sysprompt_core.variables import (
    HOST_LOCAL_TYPES,
    Busy,
    Missing,
    Resolution,
    ResolveContext,
    Value,
    default_registry,
    resolve_prompt,
)


def parsed_template(source: str, *, keep: bool = True) -> engine.Template:
    """``source`` parsed, from the process's cache of parsed texts when seen before
    (and kept there, unless ``keep`` is false: a draft)."""
    return parsed_text(source, keep=keep)


NO_HOST = HostContext()
FRAGMENT = "fragment:"


@dataclass(frozen=True)
class Rendered:
    """A prompt rendered for a conversation: what construct stores, what preview shows.

    ``prompt`` is the rendered root template with the instance and thread overrides
    layered on (what is frozen); ``host`` the context it was rendered for;
    ``fragments_used`` which variant of which fragment it used, in first-use order.

    ``shared_prefix_chars``: how many leading code points of ``prompt`` are the same for
    every conversation of the agent host, provider and model (agent-hosts §1);
    ``prefix_end`` the tag of the rendered template that ended it, with its line and
    column in the template's source as compiled (after compression, when the version
    has it), or ``None`` when no tag of the template did (the whole prompt is shared,
    or an override placed before it ended it).
    """

    prompt: str | None
    sha256: str | None
    template: CurrentTemplate
    cwd: str
    model: str
    rendered_at: datetime
    values: dict[str, Value]
    host: HostContext = NO_HOST
    fragments_used: tuple[FragmentUse, ...] = ()
    shared_prefix_chars: int = 0
    prefix_end: engine.PrefixEnd | None = None
    busy: dict[str, float] = dataclasses.field(default_factory=dict)

    def check_not_busy(self) -> None:
        """Refuse to freeze this prompt when a value it reached was only busy
        (:class:`ResolutionBusy`): asked again shortly, the value may exist."""
        if self.busy:
            raise ResolutionBusy(frozenset(self.busy), max(self.busy.values()))


def prompt_render(
    *,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    template: CurrentTemplate | None = None,
    resolve_all: bool = False,
    host: HostContext = NO_HOST,
    instance: Override | None = None,
    library: FragmentSource | None = None,
    draft: bool = False,
) -> Rendered:
    """Render ``template`` (default: the current one) for a conversation in ``cwd``,
    with the host's context, then layer the ``instance`` and the thread override on it.
    ``library`` is where its fragments come from (default: the working copy's newest
    versions; a release's, when a label serves one: ``prompts.builds``).

    ``cwd`` is what :func:`cwd_check` returned (a plain string is checked here): the
    resolvers work in its checked real path. Only what the rendering reaches is
    resolved, unless ``resolve_all`` asks for every referenced variable (the preview).
    A ``draft`` (a text being previewed, not saved) is parsed without being kept in the
    process's cache of parsed texts. Raises
    :class:`~sysprompt_core.template.PromptTooLarge` when the template's literal text
    alone is over ``MAX_PROMPT_BYTES``.
    """
    checked = cwd if isinstance(cwd, CheckedCwd) else cwd_check(cwd)
    chosen = template_current() if template is None else template
    now = timezone.now()
    context = _context(checked, model, conversation_id, now, host, library)
    source = compress(chosen.text) if chosen.compress else chosen.text
    parsed = parsed_template(source, keep=not draft)
    if isinstance(context.library, DatabaseSource):
        context.library.prefetch(
            key.removeprefix(FRAGMENT) for key in parsed.references if key.startswith(FRAGMENT)
        )
    resolution = resolve_prompt(parsed, context, default_registry())
    values = resolution.values.resolve_all() if resolve_all else resolution.values.looked_up()
    layered = layered_prompt(
        resolution.prompt,
        [instance, host.override],
        context,
        default_registry(),
        base_prefix=resolution.shared_prefix,
    )
    busy = _busy(resolution, layered)
    prompt = layered.prompt
    return Rendered(
        prompt=prompt,
        sha256=prompt_sha256(prompt),
        template=chosen,
        cwd=str(checked),
        model=model,
        rendered_at=now,
        values=values,
        host=host,
        fragments_used=tuple(dict.fromkeys((*resolution.fragments_used, *layered.used))),
        shared_prefix_chars=layered.shared_prefix_chars,
        prefix_end=_prefix_end(resolution, layered),
        busy=busy,
    )


def _busy(resolution: Resolution, layered: Layered) -> dict[str, float]:
    """The keys that were only busy, with the seconds after which to ask again."""
    busy: dict[str, float] = {}
    shared = resolution.values.state.shared
    for key in resolution.busy | layered.busy:
        value = shared.get(key)
        busy[key] = value.retry_after if isinstance(value, Busy) else 1.0
    return busy


def _prefix_end(resolution: Resolution, layered: Layered) -> engine.PrefixEnd | None:
    """Where the template ended the layered prompt's shared prefix: the base's own end,
    when the layered prefix ends at that very point of the base's text (an override
    before the base moves it by its length; one that ends it itself leaves no tag)."""
    base, end = resolution.prompt, resolution.prefix_end
    if layered.shared_prefix is None or end is None or base is None or layered.prompt is None:
        return None
    if layered.prompt is base:  # no override added anything
        return end
    offset = layered.shared_prefix_chars - resolution.shared_prefix_chars
    if offset < 0 or layered.prompt[offset : offset + len(base)] != base:
        return None
    return end


def prompt_sha256(prompt: str | None) -> str | None:
    """The SHA-256 of a prompt's UTF-8 bytes (None for no prompt)."""
    return None if prompt is None else hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def _context(
    cwd: CheckedCwd,
    model: str,
    conversation_id: str | None,
    now: datetime,
    host: HostContext,
    library: FragmentSource | None = None,
) -> ResolveContext:
    """The resolution's context: the host's values used as supplied, and only the
    host-local types of ``SERVER_RESOLVES`` resolved on this machine, in the checked
    directory (none of ``git:`` and ``file:`` when the cwd is only a value, even should
    the setting have changed since it was checked)."""
    conf = app_settings()
    resolves = conf.server_resolves
    if not cwd.on_disk:  # never resolve in a directory that was not checked
        resolves -= DIRECTORY_TYPES
    return ResolveContext(
        cwd=str(cwd),
        model=model or None,
        conversation_id=conversation_id,
        now=now,
        options=resolver_options(conf),
        directory=cwd.real,
        provider=host.provider or None,
        tools=frozenset(host.tools or ()),
        variables=host.variables or {},
        library=library_source() if library is None else library,
        supplied=host.values or {},
        server_resolves=resolves,
    )


@dataclass(frozen=True)
class CallAnswer:
    """A turn's prompt with a call override layered on: for this answer only, with its
    shared prefix (``None`` when the stored prompt's is not known)."""

    prompt: str | None
    sha256: str | None
    shared_prefix_chars: int | None = None


def call_override_apply(
    *,
    stored: str | None,
    call: Override,
    cwd: str,
    model: str = "",
    conversation_id: str | None = None,
    host: HostContext = NO_HOST,
    stored_prefix: int | None = None,
) -> CallAnswer:
    """``stored`` (the frozen prompt) with ``call`` merged on; nothing is stored. A
    preset is rendered for the request's context, like any other layer.

    ``stored_prefix`` is the stored prompt's ``shared_prefix_chars`` (``None``: not
    known, a row stored before it was recorded); the call override is this
    conversation's own, so it is shared by nobody: placed before the prompt it ends the
    prefix at 0, after it it changes nothing."""
    checked = cwd if isinstance(cwd, CheckedCwd) else cwd_check(cwd)
    context = _context(checked, model, conversation_id, timezone.now(), host)
    layered = layered_prompt(
        stored,
        [call],
        context,
        default_registry(),
        base_prefix=0 if stored_prefix is None else stored_prefix,
        shared_overrides=0,
    )
    shared = None if stored_prefix is None else layered.shared_prefix_chars
    return CallAnswer(
        prompt=layered.prompt, sha256=prompt_sha256(layered.prompt), shared_prefix_chars=shared
    )


@dataclass(frozen=True)
class TemplateReferences:
    """What :func:`template_references` answers: the keys, sorted; the host-local types
    this server leaves to the host (``host_resolves``, sorted: those ``SERVER_RESOLVES``
    leaves out), which a client resolves on the host by default; and a strong entity
    tag naming exactly that answer (``{"references", "host_resolves"}`` as JSON)."""

    keys: tuple[str, ...]
    host_resolves: tuple[str, ...] = ()

    @property
    def etag(self) -> str:
        answer = {"references": list(self.keys), "host_resolves": list(self.host_resolves)}
        digest = hashlib.sha256(json.dumps(answer).encode("utf-8")).hexdigest()
        return f'"{digest}"'


def host_resolves() -> tuple[str, ...]:
    """The host-local types (``git``, ``file``, ``system``) this server does not resolve
    on its own machine (``SERVER_RESOLVES``), sorted: their values exist only when the
    host supplies them. ``prompt`` is never among them: ``prompt:cwd`` is the request's
    ``cwd`` whatever the setting."""
    return tuple(sorted(HOST_LOCAL_TYPES - app_settings().server_resolves))


def template_references(
    *,
    provider: str | None = None,
    model: str | None = None,
    host_id: int | None = None,
    builds: Sequence[tuple[CurrentTemplate, FragmentSource]] = (),
    prompt: Prompt | None = None,
) -> TemplateReferences:
    """Every ``"type:name"`` the current template can reach for ``provider`` and
    ``model`` (``fragment:`` keys aside): in every branch, through the fragments it can
    include and the preset of the instance override of the agent host ``host_id``
    (:func:`sysprompt_core.library.reachable_references`). What a host resolves on its
    side and sends as ``values``; nothing is resolved here.

    ``builds``: the templates and libraries a label serves (one per arm of a split),
    whose references are joined; none: the working copy of ``prompt`` (``None``:
    ``default``)."""
    chosen = builds or [(template_current(prompt), library_source())]
    instance = instance_override(host_id, None if prompt is None else prompt.pk)
    keys: set[str] = set()
    for template, library in chosen:
        keys |= reachable_references(
            template.text,
            library=library,
            provider=provider or None,
            model=model or None,
            overrides=[instance],
            compress=template.compress,
        )
    return TemplateReferences(tuple(sorted(keys)), host_resolves())


@dataclass(frozen=True)
class Compression:
    """What compression did to a source text: characters, and tokens for the preview's
    provider and model (``counted_before``/``counted_after``)."""

    chars_before: int
    chars_after: int
    counted_before: tokens.TokenCount
    counted_after: tokens.TokenCount

    @classmethod
    def of(cls, source: str, *, provider: str | None, model: str | None) -> Compression:
        compressed = compress(source)
        ratios = token_ratios()
        return cls(
            len(source),
            len(compressed),
            count_tokens(source, provider=provider, model=model, ratios=ratios),
            count_tokens(compressed, provider=provider, model=model, ratios=ratios),
        )

    @property
    def tokens_before(self) -> int | None:
        return self.counted_before.tokens

    @property
    def tokens_after(self) -> int | None:
        return self.counted_after.tokens

    @property
    def tokens_error(self) -> str | None:
        """Why the source or its compressed text could not be counted, or None."""
        return self.counted_before.failure or self.counted_after.failure

    @property
    def tokens_exact(self) -> bool:
        return self.counted_before.exact


@dataclass(frozen=True)
class PromptTokens:
    """A rendered prompt's size in tokens, for the provider and model it was rendered
    for: the whole prompt and its shared prefix (each exact, or a marked estimate:
    ``sysprompt_core.tokens``)."""

    prompt: tokens.TokenCount
    shared_prefix: tokens.TokenCount

    @property
    def exact(self) -> bool:
        return self.prompt.exact

    @property
    def failure(self) -> str | None:
        """Why the prompt or its prefix could not be counted (their tokens are then
        None), or None."""
        return self.prompt.failure or self.shared_prefix.failure


def prompt_tokens(
    prompt: str | None, *, provider: str | None, model: str | None, shared_prefix_chars: int
) -> PromptTokens:
    """``prompt`` and its first ``shared_prefix_chars`` characters counted in tokens. A
    prefix that is the whole prompt is counted once; a prefix seen before (the author
    types after the shared part) comes from the counter's cache."""
    text = prompt or ""
    ratios = token_ratios()
    whole = count_tokens(text, provider=provider or None, model=model or None, ratios=ratios)
    if shared_prefix_chars >= len(text):
        return PromptTokens(whole, whole)
    prefix = count_tokens(
        text[:shared_prefix_chars], provider=provider or None, model=model or None, ratios=ratios
    )
    return PromptTokens(whole, prefix)


def conversation_tokens(stored: ConversationPrompt) -> tokens.TokenCount:
    """A stored conversation's frozen prompt in tokens, for its frozen provider and
    model."""
    return count_tokens(
        stored.system_prompt or "", provider=stored.provider or None, model=stored.model or None
    )


@dataclass(frozen=True)
class Preview:
    """What the editor shows: the prompt construct would store, lint, every value,
    and, for a text with ``compress`` on, what compression did. ``counted`` (counted
    when first asked for) is the prompt's size for the host context's provider and the
    model."""

    rendered: Rendered
    diagnostics: list[engine.Diagnostic]
    compression: Compression | None = None

    @functools.cached_property
    def counted(self) -> PromptTokens:
        rendered = self.rendered
        return prompt_tokens(
            rendered.prompt,
            provider=rendered.host.provider,
            model=rendered.model,
            shared_prefix_chars=rendered.shared_prefix_chars,
        )


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
    compress_template: bool = False,
    fragment: str | None = None,
    host: HostContext = NO_HOST,
    prompt: Prompt | None = None,
) -> Preview:
    """Render ``template`` (default: ``prompt``'s current one; ``None``: ``default``'s)
    exactly as construct would, with
    the host context and its thread override (no agent host's instance override: the
    preview is nobody's conversation).

    With ``fragment``, the fragment's variant for the provider and model is rendered
    instead, as it would be where a template includes it (overrides are not applied).
    Every referenced variable is resolved so the editor can show its value; nothing
    is stored. :class:`InvalidInput` names a fragment that does not exist.
    """
    cwd = cwd_check(cwd)
    if conversation_id is not None:
        conversation_id_check(conversation_id)
    preset_check(host.override, "override")
    if fragment is not None:
        chosen, used = _fragment_template(fragment, host, model)
        host = HostContext(provider=host.provider, tools=host.tools, variables=host.variables)
    elif template is None:
        chosen, used = template_current(prompt), None
    else:
        chosen, used = _draft(template, compress_template), None
    rendered = prompt_render(
        cwd=cwd,
        model=model,
        conversation_id=conversation_id,
        template=chosen,
        resolve_all=True,
        host=host,
        draft=template is not None and fragment is None,
    )
    if used is not None:
        fragments = tuple(dict.fromkeys((used, *rendered.fragments_used)))
        rendered = dataclasses.replace(rendered, fragments_used=fragments)
    diagnostics = template_lint(
        chosen.text, name=fragment, provider=host.provider, model=model or None
    )
    compression = (
        Compression.of(chosen.text, provider=host.provider, model=model or None)
        if chosen.compress
        else None
    )
    return Preview(rendered=rendered, diagnostics=diagnostics, compression=compression)


def _fragment_template(
    name: str, host: HostContext, model: str
) -> tuple[CurrentTemplate, FragmentUse]:
    variants = library_source().variants(name)
    key = choose_variant(variants.keys(), host.provider, model or None)
    if key is None:
        raise InvalidInput(
            "fragment", f"There is no fragment {name!r} for this provider and model."
        )
    variant = variants[key]
    template = CurrentTemplate(
        text=variant.text,
        version=variant.version,
        updated_at=None,
        author=None,
        compress=variant.compress,
    )
    return template, FragmentUse.of(variant)


def template_lint(
    text: str,
    *,
    name: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> list[engine.Diagnostic]:
    """Lint with the registered variable types and names and the library's fragments
    as its vocabulary, and the include cycles and depths of the fragments it reaches for
    ``provider`` and ``model`` (``name``: the text is that fragment's)."""
    return library_lint(
        text,
        library=library_source(),
        provider=provider,
        model=model,
        registry=default_registry(),
        name=name,
    )


def _draft(text: str, compress_text: bool = False) -> CurrentTemplate:
    return CurrentTemplate(
        text=text, version=0, updated_at=None, author=None, compress=compress_text
    )


@dataclass(frozen=True)
class CompactionPreview:
    """What ``compact`` would store now for a conversation, or why it cannot be shown;
    ``build`` is what the fresh render was built from (``None`` when nothing was)."""

    stored: ConversationPrompt
    fresh: Rendered | None
    problem: str | None
    diff: Diff | None
    build: Build | None = None


def conversation_compaction_preview(
    conversation_id: str, *, user: Actor, build: Chooser = working_copy, host_id: int | None = None
) -> CompactionPreview:
    """:func:`compaction_preview` of a conversation ``user`` may construct (it resolves
    variables: reads files, runs git); :class:`ConversationNotFound` or
    :class:`ConversationForbidden` otherwise, before anything is resolved."""
    stored = conversation_prompt_visible(conversation_id, user=user, host_id=host_id)
    conversation_check(stored, user=user, action=ConversationAction.CHANGE)
    return compaction_preview(stored, build=build)


def stored_host(stored: ConversationPrompt) -> HostContext:
    """The host context a conversation was constructed with, as stored (checked again:
    a preset may have been deleted since; it then no longer applies)."""
    source = library_source()
    try:
        override = override_valid(stored.override, "override", source)
    except InvalidInput:
        override = None
    return HostContext(
        provider=stored.provider or None,
        tools=tuple(stored.tools or ()),
        variables=dict(stored.variables or {}),
        override=override,
        override_json=stored.override,
        override_given=stored.override is not None,
    )


def instance_override(owner_id: int | None, prompt_id: int | None = None) -> Override | None:
    """The instance override of the agent host that owns a conversation for its prompt
    (``None``: ``default``), if any."""
    return None if owner_id is None else host_override(owner_id, prompt_id)


def compaction_preview(
    stored: ConversationPrompt, *, build: Chooser = working_copy
) -> CompactionPreview:
    """Render what ``build`` chooses (the label's target; default: the working copy)
    for ``stored``'s cwd, model and host context, with its owner's instance override;
    persist nothing.

    Checks no permission: callers go through :func:`conversation_compaction_preview`.
    """
    try:
        cwd = cwd_check(stored.cwd)
    except InvalidInput as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=exc.message, diff=None)
    try:
        chosen = build(
            conversation_id=stored.conversation_id, owner_id=stored.owner_id, prompt=stored.prompt
        )
        fresh = prompt_render(
            cwd=cwd,
            model=stored.model,
            conversation_id=stored.conversation_id,
            template=chosen.template,
            host=stored_host(stored),
            instance=instance_override(stored.owner_id, stored.prompt_id),
            library=chosen.library,
        )
    except engine.PromptTooLarge as exc:
        return CompactionPreview(stored=stored, fresh=None, problem=str(exc), diff=None)
    diff = text_diff(stored.system_prompt, fresh.prompt)
    return CompactionPreview(stored=stored, fresh=fresh, problem=None, diff=diff, build=chosen)
