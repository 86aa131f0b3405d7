"""The impact report: what moving a label to a candidate would do, for whom.

The server's half of releases §3; the rendering is the core's
(:func:`sysprompt_core.releases.impact_matrix`). The pipeline::

    label, candidate, window ──▶ the label's target now (the "before"), the candidate's
                                  template and library (the "after")
    stored conversations of the label constructed in the window
      ──GROUP BY agent host, provider, model, tools, variables, thread override──▶
      the 200 most frequent contexts, each with its count and its newest conversation
      (whose cwd and id it renders with)
    + every test context (count 0)
      ──ResolveContext each (host-local values as the server may resolve them:
        SERVER_RESOLVES; a test context's own values as supplied, and only those
        when it has no cwd)──▶
    impact_matrix(contexts, before, after) ──▶ :class:`ImpactReport`

When the label's target is a **split**, every context is rendered against each arm,
one row per context and arm, the context's conversations shared among the arms by
their weights (largest remainders, so the shares add up to the count): the split is a
hash, so over many conversations each arm takes its weight; for a context of a few
conversations the share is an estimate.

Nothing is stored. Work is bounded: at most ``IMPACT_MAX_CONTEXTS`` recorded contexts,
at most ``TEST_CONTEXTS_MAX`` test contexts, each side's library read once for all of
them, each diff at most ``IMPACT_DIFF_CHARS`` characters, and all the diffs of a report
(every context and arm) done within one shared deadline
(``sysprompt_core.diff.DIFF_TIMEOUT_SECONDS``): a diff not done by then is "too large
to show", with both prompts' sizes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.db.models import Count, Max
from django.utils import timezone

from sysprompt.conf import app_settings, resolver_options
from sysprompt.errors import InvalidInput, LabelNotFound
from sysprompt.library.selectors import DatabaseSource, host_override
from sysprompt.library.validation import override_valid
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.models import ConversationPrompt, Prompt
from sysprompt.prompts.selectors import CurrentTemplate
from sysprompt.prompts.token_counts import token_ratios
from sysprompt.prompts.validation import DIRECTORY_TYPES, cwd_check
from sysprompt.releases.models import TestContext
from sysprompt.releases.selectors import (
    label_get,
    pointer_build,
    test_contexts_list,
)
from sysprompt.releases.validation import candidate_valid, label_name_valid, window_days_valid
from sysprompt_core.library import Override
from sysprompt_core.releases import (
    LATEST,
    SPLIT_TOTAL,
    ContextImpact,
    Deadline,
    ImpactContext,
    ImpactSummary,
    Pointer,
    Side,
    Split,
    Target,
    impact_matrix,
)
from sysprompt_core.variables import ResolveContext

IMPACT_MAX_CONTEXTS = 200
"""The most recorded contexts one report renders (the most frequent ones)."""
IMPACT_DIFF_CHARS = 16_384
"""The longest diff of one context in a report, in characters."""

Origin = Literal["recorded", "test"]
HOST_VALUES_NOTE = (
    "Recorded contexts render host-local values (prompt:cwd, git:, file:, system:) as "
    "this server may resolve them itself (SERVER_RESOLVES), in the working directory of "
    "each context's newest conversation: an agent host's own values are never stored. "
    "Test contexts use the values they supply; one without a cwd renders with those "
    "values alone."
)


@dataclass(frozen=True)
class ContextRow:
    """One row of the report: the core's :class:`ContextImpact` and where the context
    came from (``recorded``: stored conversations; ``test``: a test context), the arm
    of the label's split it was rendered against (``None``: no split) and what that
    arm serves (``before``), and the host context itself."""

    impact: ContextImpact
    origin: Origin
    before: Pointer
    arm: int | None
    agent_host: str | None
    cwd: str | None
    provider: str
    model: str
    tools: tuple[str, ...]
    variables: dict[str, str]
    override: object
    conversation_id: str | None = None
    note: str | None = None

    @property
    def host_values(self) -> Literal["server", "supplied"]:
        return "server" if self.origin == "recorded" else "supplied"


@dataclass(frozen=True)
class ImpactReport:
    """The whole report (see the module docstring)."""

    prompt: str
    label: str
    candidate: Pointer
    current: Target
    window_days: int
    since: datetime
    contexts: tuple[ContextRow, ...]
    note: str = HOST_VALUES_NOTE

    @property
    def summary(self) -> ImpactSummary:
        return ImpactSummary.of(row.impact for row in self.contexts)


@dataclass(frozen=True)
class _Context:
    """A context before it is split among arms: what it renders with and shows."""

    order: int
    key: str
    conversations: int
    context: ResolveContext
    instance: Override | None
    thread: Override | None
    origin: Origin
    agent_host: str | None
    shown: dict[str, Any]
    note: str | None


def impact_report(
    *,
    label: object,
    candidate: object,
    window_days: object = None,
    now: datetime | None = None,
    prompt: Prompt | None = None,
) -> ImpactReport:
    """What moving the prompt's (``None``: ``default``'s) ``label`` to ``candidate`` (a
    release number of the prompt, ``{"release": N}`` or ``"latest"``) would do to the
    label's recent conversations and to every test context of the prompt (see the
    module docstring). Refused, naming the field: a bad or unknown ``label``, a bad
    ``candidate`` or ``window_days``; :class:`ReleaseNotFound` for an unknown release."""
    name = label_name_valid(label, "label")
    pointer = candidate_valid(candidate)
    days = window_days_valid(window_days)
    prompt = prompt_or_default(prompt)
    try:
        current = label_get(name, prompt=prompt).target
    except LabelNotFound as error:
        raise InvalidInput("label", str(error)) from None
    now = timezone.now() if now is None else now
    since = now - timedelta(days=days)
    template, library, _ = pointer_build(pointer, prompt=prompt)
    after = Side(template.text, library, template.compress)
    rows = label_impact(
        prompt=prompt,
        label=name,
        current=current,
        after=lambda _before: after,
        since=since,
        now=now,
        scope=ImpactScope(),
    )
    return ImpactReport(
        prompt=prompt.name,
        label=name,
        candidate=pointer,
        current=current,
        window_days=days,
        since=since,
        contexts=rows,
    )


class ImpactScope:
    """What every label's part of one report shares: one deadline for all its diffs,
    the token ratios read once (every row's estimate is calibrated alike) and each
    working directory checked once."""

    def __init__(self) -> None:
        self.deadline = Deadline()
        self.ratios = token_ratios()
        self.places = _Places()
        self._working: DatabaseSource | None = None
        self.templates: dict[int, CurrentTemplate] = {}
        """Each prompt's current template by its id, when the caller read them at once
        (a fragment's impact, over many prompts); else each label's build reads it."""
        self.tests: dict[int, list[TestContext]] | None = None
        """Every prompt's test contexts by its id, when the caller read them at once."""

    def library(self, pointer: Pointer, built: DatabaseSource) -> DatabaseSource:
        """The library ``pointer`` builds from: for ``latest`` one working library for
        the whole report (the library is shared by every prompt: its reads and its
        names are read once), else ``built`` (a release's own)."""
        if pointer != LATEST:
            return built
        if self._working is None:
            self._working = built
        return self._working


def label_impact(
    *,
    prompt: Prompt,
    label: str,
    current: Target,
    after: Callable[[Side], Side],
    since: datetime,
    now: datetime,
    scope: ImpactScope,
) -> tuple[ContextRow, ...]:
    """The rows of one label of ``prompt``: its recent conversations' contexts and the
    prompt's test contexts, each rendered against every arm the label serves now
    (``current``: the "before") and against ``after(before)`` (a release impact's
    candidate whatever the arm; a fragment impact's same arm with the fragment's text
    changed)."""
    places = scope.places
    contexts = [
        *_recorded(prompt, label, since, now, places),
        *_tests(_test_rows(prompt, scope), now, places, start=IMPACT_MAX_CONTEXTS),
    ]
    arms: list[tuple[int | None, Pointer, int]] = (
        [(index, arm.pointer, arm.weight) for index, arm in enumerate(current.arms)]
        if isinstance(current, Split)
        else [(None, current.pointer, SPLIT_TOTAL)]
    )
    weights = [weight for _, _, weight in arms]
    shares = {item.key: _apportioned(item.conversations, weights) for item in contexts}
    rows: list[tuple[int, int, ContextRow]] = []
    if not contexts:
        return ()
    for position, (index, before_pointer, _) in enumerate(arms):
        latest = scope.templates.get(prompt.pk)
        before_template, built, _ = pointer_build(before_pointer, latest, prompt=prompt)
        before_library = scope.library(before_pointer, built)
        before = Side(before_template.text, before_library, before_template.compress)
        matrix = impact_matrix(
            [
                ImpactContext(
                    key=item.key if index is None else f"{item.key}#arm-{index}",
                    context=item.context,
                    conversations=shares[item.key][position],
                    instance=item.instance,
                    thread=item.thread,
                )
                for item in contexts
            ],
            before,
            after(before),
            max_diff_chars=IMPACT_DIFF_CHARS,
            deadline=scope.deadline,
            token_ratios=scope.ratios,
        )
        for item, impact in zip(contexts, matrix.contexts, strict=True):
            row = ContextRow(
                impact=impact,
                origin=item.origin,
                before=before_pointer,
                arm=index,
                agent_host=item.agent_host,
                note=item.note,
                **item.shown,
            )
            rows.append((item.order, position, row))
    rows.sort(key=lambda entry: entry[:2])
    return tuple(row for _, _, row in rows)


def _apportioned(count: int, weights: Sequence[int]) -> list[int]:
    """``count`` shared by ``weights`` (basis points), whole numbers adding up to it:
    each its floor, the rest to the largest remainders (the first arm on a tie)."""
    exact = [count * weight / SPLIT_TOTAL for weight in weights]
    shares = [int(value) for value in exact]
    left = count - sum(shares)
    by_remainder = sorted(range(len(weights)), key=lambda i: (shares[i] - exact[i], i))
    for index in by_remainder[:left]:
        shares[index] += 1
    return shares


def _recorded(
    prompt: Prompt, label: str, since: datetime, now: datetime, places: _Places
) -> list[_Context]:
    """The most frequent contexts of the prompt's label in the window, with their newest
    conversation (the index on (prompt, label, constructed_at) finds them)."""
    fields = ("owner_id", "provider", "model", "tools", "variables", "override")
    groups = list(
        ConversationPrompt.objects.filter(prompt=prompt, label=label, constructed_at__gte=since)
        .values(*fields)
        .annotate(conversations=Count("id"), newest=Max("id"))
        .order_by("-conversations", "-newest")[:IMPACT_MAX_CONTEXTS]
    )
    newest = {
        row["id"]: row
        for row in ConversationPrompt.objects.filter(
            id__in=[group["newest"] for group in groups]
        ).values("id", "cwd", "conversation_id")
    }
    owners = _usernames({group["owner_id"] for group in groups} - {None})
    instances: dict[int | None, Override | None] = {}
    contexts = []
    for order, group in enumerate(groups):
        owner = group["owner_id"]
        if owner not in instances:
            instances[owner] = host_override(owner, prompt.pk)
        representative = newest[group["newest"]]
        tools = tuple(str(tool) for tool in group["tools"] or ())
        variables = {str(k): str(v) for k, v in (group["variables"] or {}).items()}
        context, note = _resolve_context(
            places,
            cwd=representative["cwd"],
            model=group["model"],
            conversation_id=representative["conversation_id"],
            provider=group["provider"],
            tools=tools,
            variables=variables,
            values={},
            now=now,
        )
        shown = {
            "agent_host": owners.get(owner),
            "provider": group["provider"],
            "model": group["model"],
            "tools": list(tools),
            "variables": variables,
            "override": group["override"],
        }
        contexts.append(
            _Context(
                order=order,
                key="recorded:" + _digest(shown),
                conversations=group["conversations"],
                context=context,
                instance=instances[owner],
                thread=_override(group["override"]),
                origin="recorded",
                agent_host=owners.get(owner),
                shown={
                    "cwd": representative["cwd"],
                    "provider": group["provider"],
                    "model": group["model"],
                    "tools": tools,
                    "variables": variables,
                    "override": group["override"],
                    "conversation_id": representative["conversation_id"],
                },
                note=note,
            )
        )
    return contexts


def _test_rows(prompt: Prompt, scope: ImpactScope) -> list[TestContext]:
    if scope.tests is not None:
        return scope.tests.get(prompt.pk, [])
    return list(test_contexts_list(prompt))


def _tests(
    tests: list[TestContext], now: datetime, places: _Places, *, start: int
) -> list[_Context]:
    contexts = []
    for order, test in enumerate(tests, start=start):
        tools = tuple(str(tool) for tool in test.tools or ())
        variables = {str(k): str(v) for k, v in (test.variables or {}).items()}
        context, note = _resolve_context(
            places,
            cwd=test.cwd,
            model=test.model,
            conversation_id=None,
            provider=test.provider,
            tools=tools,
            variables=variables,
            values=dict(test.values or {}),
            now=now,
        )
        contexts.append(
            _Context(
                order=order,
                key=f"test:{test.name}",
                conversations=0,
                context=context,
                instance=None,
                thread=_override(test.override),
                origin="test",
                agent_host=None,
                shown={
                    "cwd": test.cwd or None,
                    "provider": test.provider,
                    "model": test.model,
                    "tools": tools,
                    "variables": variables,
                    "override": test.override,
                },
                note=note,
            )
        )
    return contexts


class _Places(dict[str, tuple[str, str | None, str | None]]):
    """Each working directory of a report checked once: its path as checked, its real
    path (``None``: only a value) and why not, when it failed the check; and the
    settings, read once for every row."""

    def __init__(self) -> None:
        super().__init__()
        self.conf = app_settings()
        self.options = resolver_options(self.conf)

    def checked(self, cwd: str) -> tuple[str, str | None, str | None]:
        if cwd not in self:
            try:
                checked = cwd_check(cwd)
                self[cwd] = (str(checked), checked.real, None)
            except InvalidInput as error:
                note = f"{error.message} Its git: and file: values do not exist here."
                self[cwd] = (os.path.normpath(cwd), None, note)
        return self[cwd]


def _resolve_context(
    places: _Places,
    *,
    cwd: str | None,
    model: str,
    conversation_id: str | None,
    provider: str,
    tools: tuple[str, ...],
    variables: dict[str, str],
    values: dict[str, str | None],
    now: datetime,
) -> tuple[ResolveContext, str | None]:
    """The resolution context of one report row, as construct would make it (the same
    rules as ``prompts.rendering``): host-local types only as SERVER_RESOLVES allows,
    and ``git:``/``file:`` only in a cwd that passes the check today (otherwise it is
    only a value, and the note says why). Without a cwd (a test context that supplies
    its values, as a central deployment's host does) no host-local value is resolved
    here: the supplied ones are all there are."""
    conf = places.conf
    resolves = conf.server_resolves
    if not cwd:
        path, real, note = None, None, None
        resolves = frozenset()
    else:
        path, real, note = places.checked(cwd)
    if real is None:
        resolves -= DIRECTORY_TYPES
    context = ResolveContext(
        cwd=path,
        model=model or None,
        conversation_id=conversation_id,
        now=now,
        options=places.options,
        directory=real,
        provider=provider or None,
        tools=frozenset(tools),
        variables=variables,
        supplied=values,
        server_resolves=resolves,
    )
    return context, note


def _override(stored: object) -> Override | None:
    """A stored thread override (one that no longer parses counts as none, as at a
    compaction)."""
    try:
        return override_valid(stored, "override")
    except InvalidInput:
        return None


def _usernames(ids: set[int]) -> dict[int | None, str]:
    user_model = get_user_model()
    rows = user_model._default_manager.filter(pk__in=ids).values_list(
        "pk", user_model.USERNAME_FIELD
    )
    return {int(pk): str(name) for pk, name in rows}


def _digest(shown: dict[str, Any]) -> str:
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
