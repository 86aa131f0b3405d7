"""What each change says: the audit record and the webhook event of every change the
other apps make, in one place (docs/events.md lists them). Each function is the one
line a service adds inside its transaction; each calls
:func:`~sysprompt.events.services.event_record`.

Prompt text (a template's, a fragment version's, an override's) goes only into
``text``, which reaches subscriptions that include text; a token or a secret goes
nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sysprompt.events.actors import through_admin
from sysprompt.events.services import Actor, event_record
from sysprompt_core.releases import Target


def template_saved(
    *, actor: Actor, prompt: str = "", version: int, text: str, compress: bool
) -> None:
    event_record(
        prompt=prompt,
        actor=actor,
        action="template.saved",
        object=f"template version {version}",
        summary=f"saved template version {version} ({len(text):,} characters"
        f"{', compressed' if compress else ''})",
        event_type="template.saved",
        data={"version": version, "compress": compress},
        text={"text": text},
    )


def variant_words(provider: str | None, model: str | None) -> str:
    """``default variant``, ``variant openai`` or ``variant openai / gpt-5``."""
    if provider is None:
        return "default variant"
    return f"variant {provider}" + ("" if model is None else f" / {model}")


def fragment_saved(
    *,
    actor: Actor,
    prompt: str = "",
    name: str,
    provider: str | None,
    model: str | None,
    version: int,
    change: str,
    source: str,
    deleted: bool,
    text: str,
) -> None:
    """A new version of a fragment variant: ``change`` is ``saved``, ``deleted``,
    ``restored``, ``adopted`` (the shipped default, by a person) or ``installed`` (by
    the installer)."""
    what = f"fragment {name} ({variant_words(provider, model)})"
    verb = {"saved": "saved", "installed": "installed the shipped default of"}.get(change, change)
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"fragment.{change}",
        object=what,
        summary=f"{verb} {what}: version {version}"
        + (" (from an import)" if source == "import" else ""),
        event_type="fragment.saved",
        data={
            "name": name,
            "provider": provider,
            "model": model,
            "version": version,
            "change": change,
            "source": source,
            "deleted": deleted,
        },
        text={"text": text},
    )


def fragment_kept(
    *, actor: Actor, prompt: str = "", name: str, provider: str | None, model: str | None
) -> None:
    """ "Keep mine": later installs leave the variant alone (no version, no event)."""
    what = f"fragment {name} ({variant_words(provider, model)})"
    event_record(
        prompt=prompt,
        actor=actor,
        action="fragment.kept",
        object=what,
        summary=f"kept {what} over the newer shipped default",
    )


def host_account(*, actor: Actor, prompt: str = "", host: str, change: str) -> None:
    """An agent host created, or given a token (``created``, ``token_created``,
    ``token_rotated``); the token itself is never recorded."""
    summary = {
        "created": f"created agent host {host} and its token",
        "token_created": f"made a token for agent host {host}",
        "token_rotated": f"rotated the token of agent host {host}",
    }[change]
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"host.{change}",
        object=f"agent host {host}",
        summary=summary,
        event_type="host.changed",
        data={"host": host, "change": change},
    )


def host_override(*, actor: Actor, prompt: str = "", host: str, override: object) -> None:
    """An agent host's instance override set (or removed: ``None``)."""
    change = "override_removed" if override is None else "override_set"
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"host.{change}",
        object=f"agent host {host}",
        summary=f"{'removed' if override is None else 'set'} the instance override of "
        f"agent host {host}",
        event_type="host.changed",
        data={"host": host, "change": change},
        text={"override": override},
    )


def host_prompts(
    *, actor: Actor, host: str, default: str | None, allowed: Sequence[str] | None
) -> None:
    """An agent host's prompts set: its default prompt (``None``: ``default``) and the
    ones it may use (``None``: every one). Audited, not sent: the specification lists no
    such change of ``host.changed``."""
    shown = "every prompt" if allowed is None else ", ".join(allowed) or "none"
    event_record(
        actor=actor,
        action="host.prompts_set",
        object=f"agent host {host}",
        summary=f"set the prompts of agent host {host}: default {default or 'default'}, "
        f"allowed {shown}",
    )


def library_imported(*, actor: Actor, prompt: str = "", items: Sequence[Mapping[str, Any]]) -> None:
    """An import that wrote: ``items`` are its written files (``path``, ``action``:
    ``created`` or ``changed``). Its fragment versions, written in bulk, have no record
    of their own; a changed root template is also a ``template.saved``."""
    created = sum(1 for item in items if item["action"] == "created")
    changed = len(items) - created
    event_record(
        prompt=prompt,
        actor=actor,
        action="library.imported",
        object="library",
        summary=f"imported the library: {created} created, {changed} changed",
        event_type="library.imported",
        data={"created": created, "changed": changed, "items": [dict(item) for item in items]},
    )


# --- releases and labels ------------------------------------------------------------------


class _Later(Mapping[str, Any]):
    """Prompt text read only when an event is enqueued (a subscription wants it): a
    change nobody subscribes to does not read it."""

    def __init__(self, read: Callable[[], Mapping[str, Any]]) -> None:
        self._read = read
        self._value: Mapping[str, Any] | None = None

    def _loaded(self) -> Mapping[str, Any]:
        if self._value is None:
            self._value = self._read()
        return self._value

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def release_created(
    *,
    actor: Actor,
    prompt: str = "",
    number: int,
    message: str,
    template_version: int,
    fragment_count: int,
    template: Callable[[], str],
) -> None:
    """A new release (not the existing one answered for an unchanged working copy).
    ``template_version`` 0 is the built-in default; ``template`` reads the source of
    the release's root template, the text subscriptions that include text get."""
    said = f": {message}" if message else ""
    event_record(
        prompt=prompt,
        actor=actor,
        action="release.created",
        object=f"release {number}",
        summary=f"created release {number} (template version {template_version}, "
        f"{fragment_count:,} fragment version{'' if fragment_count == 1 else 's'}){said}",
        event_type="release.created",
        data={
            "number": number,
            "message": message,
            "template_version": template_version,
            "fragment_count": fragment_count,
        },
        text=_Later(lambda: {"template": template()}),
    )


def label_moved(
    *,
    actor: Actor,
    prompt: str = "",
    label: str,
    old: Target | None,
    new: Target,
    message: str,
    protected: bool,
    rollback: bool,
) -> None:
    """A label created (``old`` None), moved, or rolled back (``rollback``): one entry
    of its history, one ``label.moved``."""
    if old is None:
        action = "label.created"
        summary = f"created label {label} → {new.describe()}"
        summary += " (protected)" if protected else ""
    else:
        action = "label.rolled_back" if rollback else "label.moved"
        verb = "rolled back" if rollback else "moved"
        summary = f"{verb} label {label} from {old.describe()} to {new.describe()}"
    event_record(
        prompt=prompt,
        actor=actor,
        action=action,
        object=f"label {label}",
        summary=summary + (f": {message}" if message else ""),
        event_type="label.moved",
        data={
            "label": label,
            "from": None if old is None else old.as_json(),
            "to": new.as_json(),
            "message": message,
            "protected": protected,
            "created": old is None,
            "rollback": rollback,
        },
    )


def label_protection(*, actor: Actor, prompt: str = "", label: str, protected: bool) -> None:
    """A label's protection set or removed (no move: audited, no event)."""
    event_record(
        prompt=prompt,
        actor=actor,
        action="label.protected" if protected else "label.unprotected",
        object=f"label {label}",
        summary=f"protected label {label}"
        if protected
        else f"removed the protection of label {label}",
    )


def label_gate(
    *, actor: Actor, prompt: str = "", label: str, gate: Mapping[str, Any] | None
) -> None:
    """A label's gate set, changed or removed (``None``): audited, no event."""
    if gate is None:
        summary = f"removed the gate of label {label}"
    else:
        models = ", ".join(gate.get("models") or ()) or "the default model"
        summary = (
            f"gated label {label} on suite {gate['suite']} (max regressions "
            f"{gate['max_regressions']}, min pass rate {gate['min_pass_rate']:g}, "
            f"models {models})"
        )
    event_record(
        prompt=prompt, actor=actor, action="label.gate", object=f"label {label}", summary=summary
    )


def label_forced(
    *, actor: Actor, prompt: str = "", label: str, new: Target, message: str, reasons: Sequence[str]
) -> None:
    """A gated label moved although its gate refused (``reasons``): audited beside its
    ``label.moved``, with the publisher's message."""
    event_record(
        prompt=prompt,
        actor=actor,
        action="label.forced",
        object=f"label {label}",
        summary=f"forced label {label} to {new.describe()} past its gate "
        f"({'; '.join(reasons)}): {message}",
    )


def host_label(
    *, actor: Actor, prompt: str = "", host: str, label: str | None, previous: str | None
) -> None:
    """An agent host's label set (or removed: ``label`` None); ``previous`` the one it
    had. A ``host.changed``: what the host's conversations build from changes."""
    change = "label_removed" if label is None else "label_set"
    was = "" if previous is None else f" (was {previous})"
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"host.{change}",
        object=f"agent host {host}",
        summary=f"removed the label of agent host {host}{was}"
        if label is None
        else f"set the label of agent host {host} to {label}{was}",
        event_type="host.changed",
        data={"host": host, "change": change, "label": label},
    )


def context_saved(
    *, actor: Actor, prompt: str = "", name: str, created: bool, fields: Sequence[str] = ()
) -> None:
    """A test context created, or changed (``fields``: the names of those that changed;
    their values may be anything an author typed, so they stay out of the log)."""
    event_record(
        prompt=prompt,
        actor=actor,
        action="test_context.created" if created else "test_context.changed",
        object=f"test context {name}",
        summary=f"created test context {name}"
        if created
        else f"changed test context {name}: {', '.join(fields)}",
    )


def context_deleted(*, actor: Actor, prompt: str = "", name: str) -> None:
    event_record(
        prompt=prompt,
        actor=actor,
        action="test_context.deleted",
        object=f"test context {name}",
        summary=f"deleted test context {name}",
    )


# --- accounts: users, groups, permissions and tokens ---------------------------------------
# Recorded by ``sysprompt.accounts.signals`` whatever made the change (the app, the Django
# admin, a shell, createsuperuser, changepassword): audit only, no webhook event. Never a
# password, a hash or a token's key.


def _where() -> str:
    """The words a change made by one of the Django admin's views ends with."""
    return " in the Django admin" if through_admin() else ""


def user_created(*, actor: Actor, prompt: str = "", user: str, flags: Sequence[str]) -> None:
    said = f" ({', '.join(flags)})" if flags else ""
    event_record(
        prompt=prompt,
        actor=actor,
        action="user.created",
        object=f"user {user}",
        summary=f"created user {user}{said}{_where()}",
    )


def user_changed(*, actor: Actor, prompt: str = "", user: str, changes: Sequence[str]) -> None:
    """``changes`` say what changed (``password``, ``is_superuser: off → on``); a
    change of the password alone is a ``user.password_changed``."""
    action = "user.password_changed" if list(changes) == ["password"] else "user.changed"
    event_record(
        prompt=prompt,
        actor=actor,
        action=action,
        object=f"user {user}",
        summary=f"changed user {user}{_where()}: {', '.join(changes)}",
    )


def user_deleted(*, actor: Actor, prompt: str = "", user: str) -> None:
    event_record(
        prompt=prompt,
        actor=actor,
        action="user.deleted",
        object=f"user {user}",
        summary=f"deleted user {user}{_where()}",
    )


def user_group(*, actor: Actor, prompt: str = "", user: str, group: str, added: bool) -> None:
    """``user`` put in ``group`` (or taken out): a group carries permissions ("Prompt
    publishers" moves production)."""
    event_record(
        prompt=prompt,
        actor=actor,
        action="user.group_added" if added else "user.group_removed",
        object=f"user {user}",
        summary=(f"added user {user} to" if added else f"removed user {user} from")
        + f" group {group}{_where()}",
    )


def permission_given(
    *, actor: Actor, prompt: str = "", holder: str, permission: str, added: bool
) -> None:
    """``holder`` (``user ada``, ``group Prompt authors``) given ``permission``
    (``app_label.codename``) or deprived of it."""
    kind = holder.split(" ", 1)[0]
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"{kind}.permission_added" if added else f"{kind}.permission_removed",
        object=holder,
        summary=(f"gave {holder} the permission" if added else f"took from {holder} the permission")
        + f" {permission}{_where()}",
    )


def group_changed(
    *, actor: Actor, prompt: str = "", group: str, change: str, was: str = ""
) -> None:
    """A group ``created``, ``renamed`` (from ``was``) or ``deleted``."""
    summary = {
        "created": f"created group {group}",
        "renamed": f"renamed group {was} to {group}",
        "deleted": f"deleted group {group}",
    }[change]
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"group.{'changed' if change == 'renamed' else change}",
        object=f"group {group}",
        summary=summary + _where(),
    )


def token_changed(
    *, actor: Actor, prompt: str = "", user: str, fingerprint: str, change: str
) -> None:
    """An API token ``created``, ``deleted`` or given to another user (``changed``):
    named by its owner and a fingerprint (the first hex digits of its key's SHA-256),
    never its key."""
    verb = {"created": "created", "deleted": "deleted", "changed": "reassigned"}[change]
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"token.{change}",
        object=f"token of user {user}",
        summary=f"{verb} the API token of user {user} (fingerprint {fingerprint}){_where()}",
    )


def login_record_deleted(
    *, actor: Actor, prompt: str = "", kind: str, user: str, address: str
) -> None:
    """A record of django-axes deleted by a person in the admin: a failed-login record
    (``kind`` ``attempt``: deleting it lifts a lockout early) or a login log entry
    (``log``, ``failure_log``)."""
    what = {
        "attempt": "failed-login record",
        "log": "login log entry",
        "failure_log": "failed-login log entry",
    }[kind]
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"login_{kind}.deleted",
        object=f"{what} of {user}",
        summary=f"deleted the {what} of {user} from {address}{_where()}",
    )


# --- conversations --------------------------------------------------------------------------


def conversation_deleted(
    *, actor: Actor, prompt: str = "", conversation: str, owner: str | None, label: str
) -> None:
    """A conversation's frozen prompt forgotten: its next turn is built anew."""
    whose = f" of {owner}" if owner else ""
    event_record(
        prompt=prompt,
        actor=actor,
        action="conversation.deleted",
        object=f"conversation {conversation}",
        summary=f"deleted the stored prompt of conversation {conversation}{whose} "
        f"(label {label}){_where()}",
    )


# --- prompts -------------------------------------------------------------------------------


def prompt_refused(*, actor: Actor, prompt: str, action: str) -> None:
    """A change of ``prompt`` refused because it (or a folder above it) is restricted to
    groups ``actor`` is in none of; ``action`` says what was tried ("change suites of")."""
    event_record(
        prompt=prompt,
        actor=actor,
        action="prompt.refused",
        object=f"prompt {prompt}",
        summary=f"refused to let {_who(actor)} {action} prompt {prompt}: restricted to "
        "other groups",
    )


def _who(actor: Actor) -> str:
    if actor is None or not actor.is_authenticated:
        return "an anonymous caller"
    return f"user {actor.get_username()}"


# --- evaluations ---------------------------------------------------------------------------


def suite_changed(
    *, actor: Actor, prompt: str = "", suite: str, change: str, detail: str = ""
) -> None:
    """An evaluation suite ``created``, ``changed`` or ``deleted``, or its cases
    ``imported``."""
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"suite.{change}",
        object=f"suite {suite}",
        summary=f"{change} suite {suite}" + (f": {detail}" if detail else ""),
        data={"suite": suite, "change": change},
    )


def case_changed(*, actor: Actor, prompt: str = "", suite: str, case: str, change: str) -> None:
    """A case of a suite ``created``, ``changed`` or ``deleted``."""
    event_record(
        prompt=prompt,
        actor=actor,
        action=f"case.{change}",
        object=f"case {case} of suite {suite}",
        summary=f"{change} case {case} of suite {suite}",
        data={"suite": suite, "case": case, "change": change},
    )


def evaluation_started(
    *, actor: Actor, prompt: str = "", run_id: int, suite: str, candidate: object, baseline: object
) -> None:
    event_record(
        prompt=prompt,
        actor=actor,
        action="evaluation.started",
        object=f"evaluation {run_id}",
        summary=f"started evaluation {run_id} of suite {suite}: {candidate} against {baseline}",
        data={"id": run_id, "suite": suite, "candidate": candidate, "baseline": baseline},
    )


def evaluation_cancelled(*, actor: Actor, prompt: str = "", run_id: int, suite: str) -> None:
    event_record(
        prompt=prompt,
        actor=actor,
        action="evaluation.cancelled",
        object=f"evaluation {run_id}",
        summary=f"cancelled evaluation {run_id} of suite {suite}",
        data={"id": run_id, "suite": suite},
    )


def evaluation_finished(
    *, prompt: str = "", run_id: int, suite: str, summary: Mapping[str, Any]
) -> None:
    """A run finished: the ``evaluation.finished`` webhook, with its summary."""
    event_record(
        prompt=prompt,
        actor=None,
        action="evaluation.finished",
        object=f"evaluation {run_id}",
        summary=f"evaluation {run_id} of suite {suite} finished: "
        f"{summary.get('regressions', 0)} regressions, {summary.get('fixes', 0)} fixes, "
        f"{summary.get('errors', 0)} errors",
        event_type="evaluation.finished",
        data={"id": run_id, "suite": suite, "summary": dict(summary)},
    )
