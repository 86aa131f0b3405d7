"""Services: every write of the releases app goes through a function here.

Keyword-only, typed, atomic; they check who may act first (a protected label needs
``releases.publish_release``: :func:`label_change_check`, which the views also call
before they read a request's body), then their input (``validation``), then write.

* :func:`release_create` — a release of the working copy (the existing one when the
  working copy has not changed since it was released);
* :func:`label_set` — create a label or move it (a move is kept in its history; a PUT
  that changes nothing writes nothing; one that names no target keeps the label's),
  set or remove its gate (``gates``: a gated label's move needs a passing evaluation
  run, or a publisher's ``force`` with a message), :func:`label_rollback` — back to
  the target it had before its last move,
  and each next one a step further back; :func:`release_publish` — both at once, as
  the editor's Publish does;
* :func:`host_label_set` — an agent host's label; :func:`host_override_set` — its
  instance override: each needs the permission to publish when it changes what a
  protected label's conversations get (the host's label, or the one it moves to);
* :func:`test_context_save`, :func:`test_context_delete`.

Nothing here touches a stored conversation: moving a label changes what the next
``construct`` or ``compact`` builds from, never a frozen prompt.

Every change is recorded (``sysprompt.events.records``) in its own transaction: a new
release is a ``release.created``, every entry of a label's history a ``label.moved``,
an agent host's label a ``host.changed``; protection, gates (``label.gate``), forced
moves past a gate (``label.forced``, beside their ``label.moved``) and test contexts are
in the audit log only. A call that writes nothing records nothing, and one that fails (or
whose caller's transaction rolls back) leaves neither record nor event.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from sysprompt.conf import app_settings
from sysprompt.errors import (
    GateForceForbidden,
    GateNotPassed,
    InvalidInput,
    LabelNotFound,
    LabelProtected,
)
from sysprompt.events import records
from sysprompt.events.services import Actor as Recorded
from sysprompt.library import services as library_services
from sysprompt.library.selectors import HostOverrideState as OverrideState
from sysprompt.library.selectors import agent_host_id
from sysprompt.prompts.catalog import prompt_or_default
from sysprompt.prompts.catalog_services import editors_check
from sysprompt.prompts.models import Prompt
from sysprompt.prompts.selectors import Actor, template_version
from sysprompt.prompts.validation import preset_check
from sysprompt.releases.gates import Gate, gate_valid, move_reasons
from sysprompt.releases.models import (
    HostLabel,
    Label,
    LabelMove,
    Release,
    ReleaseFragment,
    TestContext,
)
from sysprompt.releases.permissions import PUBLISH_PERMISSION
from sysprompt.releases.selectors import (
    PRODUCTION_DEFAULT,
    HostLabelState,
    LabelState,
    host_label_state,
    label_get,
    release_row,
    rollback_target,
    working_copy_snapshot,
)
from sysprompt.releases.validation import (
    TEST_CONTEXTS_MAX,
    candidate_valid,
    label_name_valid,
    message_valid,
    target_valid,
    test_context_valid,
)
from sysprompt_core.prompt_names import DEFAULT_PROMPT
from sysprompt_core.releases import (
    LATEST,
    PRODUCTION,
    SPLIT_TOTAL,
    Arm,
    Pointer,
    Single,
    Split,
    Target,
    parse_target,
)

_ATTEMPTS = 100
_ROWS = 500
"""Rows per INSERT of a release's variants: 1,500 parameters, well within what SQLite
(32,766) and PostgreSQL (65,535) take in one statement."""


def prompt_write_check(*, user: Actor | None, prompt: Prompt, action: str) -> None:
    """:class:`PromptForbidden` when ``user`` may not ``action`` on ``prompt`` (it, or a
    folder above it, is restricted to groups the user is in none of), the refusal kept
    in the audit log (``prompt.refused``, naming who tried). Call it outside a
    transaction that the refusal rolls back (the views call it before anything else;
    every write service here calls it first)."""
    editors_check(_who(user), prompt, action=action)


@dataclass(frozen=True)
class ReleaseCreated:
    """A release and whether this call created it (``False``: the working copy was
    already released as it is)."""

    release: Release
    created: bool


def release_create(
    *, message: object = "", author: Actor | None, prompt: Prompt | None = None
) -> ReleaseCreated:
    """Release the prompt's working copy (``None``: ``default``): its current template
    version and every live variant's newest version, as one new release with
    ``message``, numbered after the prompt's last. When exactly those versions are
    already a release of the prompt, that release is answered and nothing is written.
    :class:`PromptForbidden` (audited) for an author the prompt's restriction refuses.

    Two authors releasing at once get one release each when their working copies
    differ (the numbers never clash: a lost race takes the next one), or both the same
    release when they do not."""
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="release")
    text = message_valid(message)
    for _ in range(_ATTEMPTS):
        try:
            return _release_add(message=text, author=author, prompt=prompt)
        except IntegrityError:
            continue  # a concurrent release took the number or the fingerprint: look again
    raise RuntimeError(f"release_create lost {_ATTEMPTS} races in a row")


@transaction.atomic
def _release_add(*, message: str, author: Actor | None, prompt: Prompt) -> ReleaseCreated:
    snapshot = working_copy_snapshot(prompt)
    mine = Release.objects.filter(prompt=prompt)
    existing = mine.filter(fingerprint=snapshot.fingerprint).first()
    if existing is not None:
        return ReleaseCreated(existing, created=False)
    number = (mine.aggregate(top=Max("number"))["top"] or 0) + 1
    release = Release.objects.create(
        prompt=prompt,
        number=number,
        message=message,
        author_id=None if author is None else author.pk,
        created_at=timezone.now(),
        template_version_id=snapshot.template_version,
        fingerprint=snapshot.fingerprint,
    )
    _variants_insert(release.pk, snapshot.variants)
    records.release_created(
        actor=_who(author),
        number=number,
        message=message,
        template_version=snapshot.template_version or 0,
        fragment_count=len(snapshot.variants),
        template=lambda: _template_source(snapshot.template_version),
        prompt=prompt.name,
    )
    return ReleaseCreated(release, created=True)


def _template_source(number: int | None) -> str:
    """The root template's source in template version ``number`` (None: the built-in
    default), as stored."""
    if number is None:
        return app_settings().default_template
    version = template_version(number)
    assert version is not None  # the release's row references it (PROTECT)
    return version.text


def _who(author: Actor | None) -> Recorded:
    """The author as the audit log names them (every user model is an
    ``AbstractBaseUser``; ``None`` is the system)."""
    return author if isinstance(author, AbstractBaseUser | AnonymousUser) else None


def _variants_insert(release_id: int, variants: tuple[tuple[int, int], ...]) -> None:
    """One row per variant version, inserted ``_ROWS`` rows to a statement written once:
    building a thousand model instances for ``bulk_create`` cost more than writing
    them, and one statement per row costs a round trip each."""
    table = connection.ops.quote_name(ReleaseFragment._meta.db_table)
    rows = [(release_id, fragment, version) for version, fragment in variants]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), _ROWS):
            chunk = rows[start : start + _ROWS]
            values = ", ".join(["(%s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (release_id, fragment_id, version_id) VALUES {values}",
                [value for row in chunk for value in row],
            )


class _Unchanged:
    """The type of :data:`UNCHANGED`."""


UNCHANGED = _Unchanged()
"""A label's target or gate left as it is (``None`` removes a gate)."""


@dataclass(frozen=True)
class LabelSet:
    """A label after :func:`label_set`, and whether the call created it or moved it."""

    label: LabelState
    created: bool
    moved: bool


def label_change_check(*, name: str, author: Actor) -> None:
    """:class:`LabelProtected` unless ``author`` may change the label ``name``: a
    protected one (``production`` always, even while its row is missing) needs
    ``releases.publish_release``. Who may, before what they ask: every write of a
    label calls it before it checks its input, and the views before they read the
    request's body, so a refusal is 403 whatever the body holds."""
    if _is_protected(name) and not author.has_perm(PUBLISH_PERMISSION):
        raise LabelProtected(name, PUBLISH_PERMISSION)


def label_set(
    *,
    name: str,
    target: object = UNCHANGED,
    message: object = "",
    protected: bool | None = None,
    gate: object = UNCHANGED,
    force: object = False,
    author: Actor,
    prompt: Prompt | None = None,
) -> LabelSet:
    """Create the label ``name`` pointing at ``target``, or move it there, with
    ``message`` (kept in its history); ``target`` left out keeps an existing label's
    (a new label needs one); ``protected`` marks it (``None``: unchanged;
    ``production`` is always protected); ``gate`` sets its gate (a dict, ``None``
    removes it, left out: unchanged).

    A gated label's move to a release it does not serve yet is refused
    (:class:`GateNotPassed`) unless a run passed (``gates.move_reasons``), or a
    publisher forces it (``force`` with a ``message``; :class:`GateForceForbidden`
    for anyone else). The move is checked against the gate the label had before the
    call; a gated label never follows latest, forced or not.

    A protected label (or unprotecting one) needs ``releases.publish_release``:
    :class:`LabelProtected` without it, before the input is checked or anything
    written (:func:`label_change_check`). Refused, naming the field: a bad name,
    target, message or gate. :class:`ReleaseNotFound` for a release that does not
    exist. A call that changes neither target, protection nor gate writes nothing.

    The label is the prompt's (``None``: ``default``); whether its name is protected is
    deployment-wide: changing ``protected`` changes every prompt's label of that name,
    and a new label under a name protected elsewhere is protected. An author the
    prompt's restriction refuses gets :class:`PromptForbidden` (audited) first."""
    name = label_name_valid(name)
    label_change_check(name=name, author=author)  # who may, before what they ask
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="move label")
    checked = None if isinstance(target, _Unchanged) else target_valid(target)
    text = message_valid(message)
    if protected is not None and not isinstance(protected, bool):
        raise InvalidInput("protected", "protected is true or false.")
    if name == PRODUCTION and protected is False:
        raise InvalidInput("protected", "production is always protected.")
    forced = _force_valid(force, name=name, message=text, author=author)
    new_gate: Gate | None | _Unchanged = (
        UNCHANGED if gate is UNCHANGED else gate_valid(gate, prompt=prompt)
    )
    return _label_write(
        name=name,
        target=checked,
        message=text,
        protected=protected,
        author=author,
        rollback=False,
        gate=new_gate,
        force=forced,
        prompt=prompt,
    )


def _force_valid(force: object, *, name: str, message: str, author: Actor) -> bool:
    """``force`` checked: a boolean; true needs a message and a publisher."""
    if not isinstance(force, bool):
        raise InvalidInput("force", "force is true or false.")
    if force and not message.strip():
        raise InvalidInput("message", "a forced move needs a message saying why.")
    if force and not author.has_perm(PUBLISH_PERMISSION):
        raise GateForceForbidden(name, PUBLISH_PERMISSION)
    return force


def label_rollback(
    *,
    name: str,
    message: object = "",
    force: object = False,
    author: Actor,
    prompt: Prompt | None = None,
) -> LabelSet:
    """Move the label one step further back through its history
    (:func:`~sysprompt.releases.selectors.rollback_target`): the first rollback to the
    target it had before its last move, the next to the one before that, and so on; a
    move that is not a rollback starts a new step. The same permission as a move, and
    the same gate (``force`` as in :func:`label_set`). Refused (field ``name``) when
    there is no earlier target: the label has not moved since it was created, or every
    step has been rolled back."""
    name = label_name_valid(name)
    label_change_check(name=name, author=author)  # who may, before what they ask
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="roll back label")
    text = message_valid(message)
    forced = _force_valid(force, name=name, message=text, author=author)
    with transaction.atomic():
        label = _locked(name, prompt)
        if label is None:
            raise LabelNotFound(name)
        _check_may_change(label, author)
        previous = rollback_target(name, prompt=prompt)
        if previous is None:
            raise InvalidInput(
                "name",
                f"Label {name!r} has no earlier target to roll back to: it points at "
                f"{parse_target(label.target).describe()}, the first target of its history "
                "that is not rolled back.",
            )
        return _label_write(
            name=name,
            target=previous,
            message=text or f"Rollback to {previous.describe()}.",
            protected=None,
            author=author,
            rollback=True,
            gate=UNCHANGED,
            force=forced,
            prompt=prompt,
        )


@transaction.atomic
def _label_write(
    *,
    name: str,
    target: Target | None,
    message: str,
    protected: bool | None,
    author: Actor,
    rollback: bool,
    gate: Gate | None | _Unchanged,
    force: bool,
    prompt: Prompt,
) -> LabelSet:
    now = timezone.now()
    label = _locked(name, prompt)
    created = label is None
    if label is not None:
        _check_may_change(label, author)  # who may, before what: 403 before a 404
    elif name == PRODUCTION:  # its row is missing: it is protected all the same
        protected = True
        if not author.has_perm(PUBLISH_PERMISSION):
            raise LabelProtected(name, PUBLISH_PERMISSION)
    if target is None:  # left out: the label keeps its target
        target = _kept_target(name, label)
    else:
        for pointer in target.pointers:
            if pointer != LATEST:
                release_row(pointer, prompt=prompt)  # ReleaseNotFound before any write
    if not isinstance(gate, _Unchanged) and gate is not None and LATEST in target.pointers:
        raise InvalidInput(
            "gate",
            "a gated label cannot follow latest (every save would reach it unevaluated): "
            "point it at a release first.",
        )
    gate_json = None if isinstance(gate, _Unchanged) or gate is None else gate.stored_json()
    if label is None:
        if protected is None:  # a name protected elsewhere is protected here too
            protected = _is_protected(name)
        try:
            with transaction.atomic():
                label = Label.objects.create(
                    prompt=prompt,
                    name=name,
                    target=target.as_json(),
                    protected=bool(protected),
                    gate=gate_json,
                    created_at=now,
                    updated_at=now,
                    updated_by_id=author.pk,
                )
        except IntegrityError:  # created concurrently: move it instead
            label = _locked(name, prompt)
            assert label is not None
            created = False
        else:
            _move(label, None, target, author=author, at=now, message=message, rollback=rollback)
            if _protection_spread(name, bool(protected), prompt):
                records.label_protection(actor=_who(author), label=name, protected=bool(protected))
            if gate_json is not None:
                records.label_gate(
                    actor=_who(author), label=name, gate=gate_json, prompt=prompt.name
                )
            return LabelSet(label_get(name, prompt=prompt), created=True, moved=True)
    _check_may_change(label, author)
    old = parse_target(label.target)
    moved = old != target
    refused = _gate_refusal(label, old, target, prompt) if moved else []
    if refused and (not force or LATEST in target.pointers):
        guard = Gate.from_json(label.gate)
        assert guard is not None  # only a gate refuses
        raise GateNotPassed(name, guard.suite, refused)
    if isinstance(gate, _Unchanged):
        gate_json = label.gate
    protect = label.protected if protected is None else protected
    gate_changed = gate_json != label.gate
    if not moved and protect == label.protected and not gate_changed:
        return LabelSet(label_get(name, prompt=prompt), created=created, moved=False)
    protection_changed = protect != label.protected
    label.target = target.as_json()
    label.protected = protect
    label.gate = gate_json
    label.updated_at = now
    label.updated_by_id = author.pk
    label.save(update_fields=["target", "protected", "gate", "updated_at", "updated_by"])
    if moved:
        _move(label, old, target, author=author, at=now, message=message, rollback=rollback)
    if refused:
        records.label_forced(
            actor=_who(author),
            label=name,
            new=target,
            message=message,
            reasons=refused,
            prompt=prompt.name,
        )
    if protection_changed:
        _protection_spread(name, protect, prompt)
        records.label_protection(actor=_who(author), label=name, protected=protect)
    if gate_changed:
        records.label_gate(actor=_who(author), label=name, gate=gate_json, prompt=prompt.name)
    return LabelSet(label_get(name, prompt=prompt), created=created, moved=moved)


def _protection_spread(name: str, protected: bool, prompt: Prompt) -> bool:
    """Give every other prompt's label ``name`` the protection ``protected`` (whether a
    name is protected is deployment-wide); whether any of them changed."""
    others = Label.objects.filter(name=name).exclude(prompt=prompt).exclude(protected=protected)
    return others.update(protected=protected) > 0


def _kept_target(name: str, label: Label | None) -> Target:
    """The target of a call that names none: the label's own; ``production``'s as
    installed while its row is missing; refused for a label that does not exist."""
    if label is not None:
        return parse_target(label.target)
    if name == PRODUCTION:
        return PRODUCTION_DEFAULT
    raise InvalidInput(
        "target",
        f'Label {name!r} does not exist: a new label needs a target ("latest", '
        '{"release": N} or {"split": [...]}).',
    )


def _gate_refusal(label: Label, old: Target, new: Target, prompt: Prompt) -> list[str]:
    """Why the label's gate (if any) refuses the move from ``old`` to ``new``: only
    runs of the label's ``prompt`` count."""
    gate = Gate.from_json(label.gate)
    if gate is None:
        return []
    return move_reasons(gate=gate, label=label.name, current=old, new=new, prompt=prompt)


def _locked(name: str, prompt: Prompt) -> Label | None:
    return Label.objects.select_for_update().filter(prompt=prompt, name=name).first()


def _check_may_change(label: Label, author: Actor) -> None:
    if label.protected and not author.has_perm(PUBLISH_PERMISSION):
        raise LabelProtected(label.name, PUBLISH_PERMISSION)


def _prompt_name(label: Label) -> str:
    """The name of the prompt ``label`` belongs to (for the audit record of its move)."""
    return label.prompt.name


def _move(
    label: Label,
    old: Target | None,
    new: Target,
    *,
    author: Actor | None,
    at: datetime,
    message: str,
    rollback: bool = False,
) -> LabelMove:
    """Keep ``label``'s move from ``old`` (``None``: its creation) to ``new`` in its
    history, and report it (``label.moved``) in the same transaction."""
    move = LabelMove.objects.create(
        label=label,
        from_target=None if old is None else old.as_json(),
        to_target=new.as_json(),
        author_id=None if author is None else author.pk,
        at=at,
        message=message,
        rollback=rollback,
    )
    records.label_moved(
        actor=_who(author),
        label=label.name,
        old=old,
        new=new,
        message=message,
        protected=label.protected,
        rollback=rollback,
        prompt=_prompt_name(label),
    )
    return move


@dataclass(frozen=True)
class Published:
    """What :func:`release_publish` did: the release (created or not) and the label."""

    release: ReleaseCreated
    label: LabelSet


def release_publish(
    *,
    label: str,
    candidate: object = LATEST,
    message: object = "",
    weight: int | None = None,
    force: object = False,
    author: Actor,
    prompt: Prompt | None = None,
) -> Published:
    """Publish: release the working copy (``candidate`` ``"latest"``; an existing one
    is answered when nothing changed) or take release ``candidate``, and move
    ``label`` to it — entirely, or with ``weight`` basis points as a new last arm of a
    split beside what the label serves now (a release or latest; a label already
    split is set with :func:`label_set`). One transaction: both happen or neither (a
    gate refusing the move leaves no new release either); ``force`` as in
    :func:`label_set`. The release and the label are the prompt's (``None``:
    ``default``)."""
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="publish")
    pointer: Pointer = candidate_valid(candidate)
    text = message_valid(message)
    with transaction.atomic():
        if pointer == LATEST:
            made = release_create(message=text, author=author, prompt=prompt)
        else:
            made = ReleaseCreated(release_row(pointer, prompt=prompt), created=False)
        number = made.release.number
        target: Target = Single(number)
        if weight is not None:
            current = label_get(label_name_valid(label, "label"), prompt=prompt).target
            target = _canary(current, number, weight)
        moved = label_set(
            name=label,
            target=target.as_json(),
            message=text,
            force=force,
            author=author,
            prompt=prompt,
        )
    return Published(made, moved)


def _canary(current: Target, number: int, weight: object) -> Target:
    if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight < SPLIT_TOTAL:
        raise InvalidInput("weight", f"the weight is 1 to {SPLIT_TOTAL - 1:,} basis points.")
    if isinstance(current, Split):
        raise InvalidInput(
            "weight",
            "the label is split already: set its arms with PUT /api/labels/{name}.",
        )
    if current.pointer == number:
        raise InvalidInput("weight", f"the label serves release {number} already.")
    return Split((Arm(current.pointer, SPLIT_TOTAL - weight), Arm(number, weight)))


def host_change_check(*, username: str, author: Actor, prompt: Prompt | None = None) -> None:
    """:class:`LabelProtected` unless ``author`` may change what the agent host
    ``username`` gets from the prompt (:class:`AgentHostNotFound` first): while its
    label for the prompt is protected (no label: production), its label and its
    instance override for the prompt need the permission that moving that label needs.
    The views call it before they read a request's body."""
    user_id = agent_host_id(username)
    if author.has_perm(PUBLISH_PERMISSION):
        return
    name = _host_label_name(user_id, prompt_or_default(prompt))
    if _is_protected(name):
        raise LabelProtected(name, PUBLISH_PERMISSION, host=username)


def _host_label_name(user_id: int, prompt: Prompt) -> str:
    """The label an agent host's conversations of the prompt use when a call names none."""
    current = (
        HostLabel.objects.filter(user_id=user_id, prompt=prompt)
        .values_list("label__name", flat=True)
        .first()
    )
    return current or PRODUCTION


def host_label_set(
    *, username: str, label: str | None, author: Actor, prompt: Prompt | None = None
) -> HostLabelState:
    """Set (``None``: remove) the label of the agent host ``username`` for the prompt
    (``None``: ``default``): its conversations of that prompt use it when a call names
    none, from their next construct on. Refused (field ``label``): a name that is no
    label of the prompt. :class:`AgentHostNotFound`; :class:`PromptForbidden`
    (audited) for an author the prompt's restriction refuses.

    Moving a host off a protected label, or onto one, changes what that label's
    conversations get: it needs the permission that moving the label needs
    (:class:`LabelProtected` without it, before anything is written; for a host on a
    protected label, before the new label is even checked: :func:`host_change_check`)."""
    host_change_check(username=username, author=author, prompt=prompt)  # who may, first
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="set the agent host's label")
    with transaction.atomic():
        return _host_label_write(username=username, label=label, author=author, prompt=prompt)


def _host_label_write(
    *, username: str, label: str | None, author: Actor, prompt: Prompt
) -> HostLabelState:
    user_id = agent_host_id(username)
    mine = HostLabel.objects.filter(user_id=user_id, prompt=prompt)
    previous = mine.values_list("label__name", flat=True).first()
    if label is None:
        if previous is not None:
            _check_host_may_change(username, previous, PRODUCTION, author)
        mine.delete()
        if previous is not None:
            records.host_label(
                actor=_who(author), host=username, label=None, previous=previous, prompt=prompt.name
            )
        return host_label_state(username, prompt=prompt)
    name = label_name_valid(label, "label")
    row = Label.objects.filter(prompt=prompt, name=name).first()
    if row is None and name == PRODUCTION:
        row = production_ensure(prompt)
    if row is None:
        where = (
            "/api/labels"
            if prompt.name == DEFAULT_PROMPT
            else f"/api/prompts/{prompt.name}/-/labels"
        )
        raise InvalidInput("label", f"There is no label {name!r}; GET {where} lists them.")
    _check_host_may_change(username, previous or PRODUCTION, name, author)
    HostLabel.objects.update_or_create(
        user_id=user_id,
        prompt=prompt,
        defaults={"label": row, "updated_at": timezone.now(), "updated_by_id": author.pk},
    )
    if previous != name:
        records.host_label(
            actor=_who(author), host=username, label=name, previous=previous, prompt=prompt.name
        )
    return host_label_state(username, prompt=prompt)


def host_override_set(
    *, username: str, override: object, author: Actor, prompt: Prompt | None = None
) -> OverrideState:
    """Set (``None``: remove) the instance override of the agent host ``username`` for
    the prompt (``None``: ``default``;
    :func:`sysprompt.library.services.host_override_set`, which checks it), once
    the author may: the override reaches every conversation of the prompt the host
    builds, so a host whose label for it is protected (no label: production) needs the
    permission that moving that label needs — :class:`LabelProtected` without it,
    before the override is checked, nothing written (:func:`host_change_check`); an
    author the prompt's restriction refuses gets :class:`PromptForbidden` (audited)."""
    host_change_check(username=username, author=author, prompt=prompt)
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="set the agent host's override")
    with transaction.atomic():
        return library_services.host_override_set(
            username=username, prompt_id=prompt.pk, override=override, author=_who(author)
        )


def _is_protected(name: str) -> bool:
    """Whether the label ``name`` is protected (production always is, even while its
    row is missing)."""
    if name == PRODUCTION:
        return True
    return Label.objects.filter(name=name, protected=True).exists()


def _check_host_may_change(host: str, current: str, new: str, author: Actor) -> None:
    """A host's label going from ``current`` to ``new`` (each: its label, or
    production without one): refused without the permission to publish when either is
    protected and they differ."""
    if current == new or author.has_perm(PUBLISH_PERMISSION):
        return
    for name in (current, new):
        if _is_protected(name):
            raise LabelProtected(name, PUBLISH_PERMISSION, host=host)


PRODUCTION_MESSAGE = "Created: production follows latest (saving is shipping)."


@transaction.atomic
def production_ensure(prompt: Prompt | None = None) -> Label:
    """The prompt's ``production`` label (``None``: ``default``'s), created ``→ latest``
    and protected (with its creation in its history) when it is missing: the migration
    creates ``default``'s, and ``bootstrap`` makes sure it is there again (after a
    database was emptied by hand)."""
    now = timezone.now()
    label, created = Label.objects.get_or_create(
        prompt=prompt_or_default(prompt),
        name=PRODUCTION,
        defaults={"target": LATEST, "protected": True, "created_at": now, "updated_at": now},
    )
    if created:
        target = Single(LATEST)
        _move(label, None, target, author=None, at=now, message=PRODUCTION_MESSAGE)
    return label


@dataclass(frozen=True)
class TestContextSaved:
    """A test context after :func:`test_context_save`, and whether it was created."""

    __test__ = False  # not a pytest test class, whatever its name says

    context: TestContext
    created: bool


def test_context_save(
    *, name: str, fields: dict[str, Any], author: Actor, prompt: Prompt | None = None
) -> TestContextSaved:
    """Create or replace the prompt's (``None``: ``default``'s) test context ``name``
    with ``fields`` (``cwd`` or ``values`` required, stored ``""`` for no cwd;
    ``provider``, ``model``, ``tools``, ``variables``, ``override`` optional), each
    checked as an agent host's request is (400 naming the field).
    At most ``TEST_CONTEXTS_MAX`` exist per prompt: each runs in every impact report of
    the prompt. :class:`PromptForbidden` (audited) for an author the prompt's
    restriction refuses."""
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="save a test context")
    with transaction.atomic():
        return _test_context_write(name=name, fields=fields, author=author, prompt=prompt)


def _test_context_write(
    *, name: str, fields: dict[str, Any], author: Actor, prompt: Prompt
) -> TestContextSaved:
    checked = test_context_valid(name=name, fields=fields)
    preset_check(checked.host.override, "override")
    now = timezone.now()
    values = {
        "cwd": "" if checked.cwd is None else str(checked.cwd),
        "values": dict(checked.host.values or {}),
        "provider": checked.host.provider or "",
        "model": checked.model,
        "tools": list(checked.host.tools or ()),
        "variables": dict(checked.host.variables or {}),
        "override": checked.override_json,
        "updated_at": now,
        "updated_by_id": author.pk,
    }
    mine = TestContext.objects.filter(prompt=prompt)
    row = mine.select_for_update().filter(name=checked.name).first()
    if row is None:
        if mine.count() >= TEST_CONTEXTS_MAX:
            raise InvalidInput(
                "name",
                f"There are {TEST_CONTEXTS_MAX} test contexts already, the most a prompt "
                "keeps (each runs in every impact report); delete one first.",
            )
        row = TestContext.objects.create(prompt=prompt, name=checked.name, created_at=now, **values)
        records.context_saved(
            actor=_who(author), name=checked.name, created=True, prompt=prompt.name
        )
        return TestContextSaved(row, created=True)
    changed = [
        field
        for field, value in values.items()
        if field not in _BOOKKEEPING and getattr(row, field) != value
    ]
    for field, value in values.items():
        setattr(row, field, value)
    row.save()
    if changed:
        records.context_saved(
            actor=_who(author), name=checked.name, created=False, fields=changed, prompt=prompt.name
        )
    return TestContextSaved(row, created=False)


_BOOKKEEPING = frozenset({"updated_at", "updated_by_id"})
"""A test context's fields that say who saved it last: no change of their own."""


def test_context_delete(*, name: str, author: Actor, prompt: Prompt | None = None) -> bool:
    """Delete the prompt's (``None``: ``default``'s) test context ``name``; False when
    there was none. :class:`PromptForbidden` (audited) for an author the prompt's
    restriction refuses."""
    checked = label_name_valid(name)
    prompt = prompt_or_default(prompt)
    prompt_write_check(user=author, prompt=prompt, action="delete a test context")
    with transaction.atomic():
        deleted, _ = TestContext.objects.filter(prompt=prompt, name=checked).delete()
        if deleted:
            records.context_deleted(actor=_who(author), name=checked, prompt=prompt.name)
    return deleted > 0
