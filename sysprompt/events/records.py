"""What each change says: the audit record and the webhook event of every change the
other apps make, in one place (docs/events.md lists them). Each function is the one
line a service adds inside its transaction; each calls
:func:`~sysprompt.events.services.event_record`.

Prompt text (a template's, a fragment version's, an override's) goes only into
``text``, which reaches subscriptions that include text; a token or a secret goes
nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sysprompt.events.services import Actor, event_record


def template_saved(*, actor: Actor, version: int, text: str, compress: bool) -> None:
    event_record(
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


def fragment_kept(*, actor: Actor, name: str, provider: str | None, model: str | None) -> None:
    """ "Keep mine": later installs leave the variant alone (no version, no event)."""
    what = f"fragment {name} ({variant_words(provider, model)})"
    event_record(
        actor=actor,
        action="fragment.kept",
        object=what,
        summary=f"kept {what} over the newer shipped default",
    )


def host_account(*, actor: Actor, host: str, change: str) -> None:
    """An agent host created, or given a token (``created``, ``token_created``,
    ``token_rotated``); the token itself is never recorded."""
    summary = {
        "created": f"created agent host {host} and its token",
        "token_created": f"made a token for agent host {host}",
        "token_rotated": f"rotated the token of agent host {host}",
    }[change]
    event_record(
        actor=actor,
        action=f"host.{change}",
        object=f"agent host {host}",
        summary=summary,
        event_type="host.changed",
        data={"host": host, "change": change},
    )


def host_override(*, actor: Actor, host: str, override: object) -> None:
    """An agent host's instance override set (or removed: ``None``)."""
    change = "override_removed" if override is None else "override_set"
    event_record(
        actor=actor,
        action=f"host.{change}",
        object=f"agent host {host}",
        summary=f"{'removed' if override is None else 'set'} the instance override of "
        f"agent host {host}",
        event_type="host.changed",
        data={"host": host, "change": change},
        text={"override": override},
    )


def library_imported(*, actor: Actor, items: Sequence[Mapping[str, Any]]) -> None:
    """An import that wrote: ``items`` are its written files (``path``, ``action``:
    ``created`` or ``changed``). Its fragment versions, written in bulk, have no record
    of their own; a changed root template is also a ``template.saved``."""
    created = sum(1 for item in items if item["action"] == "created")
    changed = len(items) - created
    event_record(
        actor=actor,
        action="library.imported",
        object="library",
        summary=f"imported the library: {created} created, {changed} changed",
        event_type="library.imported",
        data={"created": created, "changed": changed, "items": [dict(item) for item in items]},
    )
