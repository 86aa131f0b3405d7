"""What each change of the catalog of prompts says in the audit log (docs/events.md):
a prompt created, renamed, archived, unarchived, duplicated, changed or deleted, a
folder restricted, and a write refused by a group restriction. Each record names the
prompt (``AuditRecord.prompt``); none is a webhook event type.
"""

from __future__ import annotations

from collections.abc import Sequence

from sysprompt.events.services import Actor, event_record


def prompt_created(*, actor: Actor, prompt: str, version: int | None) -> None:
    event_record(
        actor=actor,
        action="prompt.created",
        object=f"prompt {prompt}",
        summary=f"created prompt {prompt}"
        + ("" if version is None else f" with template version {version}"),
        prompt=prompt,
    )


def prompt_renamed(*, actor: Actor, prompt: str, was: str) -> None:
    event_record(
        actor=actor,
        action="prompt.renamed",
        object=f"prompt {prompt}",
        summary=f"renamed prompt {was} to {prompt} ({was} stays an alias)",
        prompt=prompt,
    )


def prompt_archived(*, actor: Actor, prompt: str, archived: bool) -> None:
    verb = "archived" if archived else "unarchived"
    event_record(
        actor=actor,
        action=f"prompt.{verb}",
        object=f"prompt {prompt}",
        summary=f"{verb} prompt {prompt}",
        prompt=prompt,
    )


def prompt_duplicated(
    *, actor: Actor, prompt: str, source: str, test_contexts: int, suites: int
) -> None:
    copied = []
    if test_contexts:
        copied.append(f"{test_contexts} test context{'s' * (test_contexts != 1)}")
    if suites:
        copied.append(f"{suites} suite{'s' * (suites != 1)}")
    event_record(
        actor=actor,
        action="prompt.duplicated",
        object=f"prompt {prompt}",
        summary=f"duplicated prompt {source} as {prompt}"
        + (f" with {' and '.join(copied)}" if copied else ""),
        prompt=prompt,
    )


def prompt_changed(*, actor: Actor, prompt: str, fields: Sequence[str]) -> None:
    event_record(
        actor=actor,
        action="prompt.changed",
        object=f"prompt {prompt}",
        summary=f"changed the {', '.join(fields)} of prompt {prompt}",
        prompt=prompt,
    )


def prompt_deleted(*, actor: Actor, prompt: str) -> None:
    event_record(
        actor=actor,
        action="prompt.deleted",
        object=f"prompt {prompt}",
        summary=f"deleted prompt {prompt}",
        prompt=prompt,
    )


def folder_restricted(*, actor: Actor, folder: str, groups: Sequence[str]) -> None:
    event_record(
        actor=actor,
        action="folder.restricted",
        object=f"folder {folder}",
        summary=f"restricted folder {folder} to {', '.join(groups)}"
        if groups
        else f"lifted the restriction of folder {folder}",
    )
