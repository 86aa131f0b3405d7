"""Releases §3: the impact report, fed from stored conversations and test contexts."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.errors import InvalidInput, ReleaseNotFound
from sysprompt.library import services as library
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.releases import services
from sysprompt.releases.impact import IMPACT_MAX_CONTEXTS, impact_report
from sysprompt_core.releases import LATEST
from tests.releases.support import save, template

pytestmark = pytest.mark.django_db

TEMPLATE = "Root.\n[fragment:core]\n[if tool:shell][fragment:shell][endif]\n[file:AGENTS.md]"


def conversation(cid: str, cwd: Path, *, label: str = "production", **fields: Any) -> None:
    now = timezone.now()
    fields.setdefault("constructed_at", now)
    ConversationPrompt.objects.create(
        prompt=default_prompt(),
        conversation_id=cid,
        system_prompt="frozen",
        cwd=str(cwd),
        created_at=now,
        label=label,
        **fields,
    )


@pytest.fixture
def released(writer: User, publisher: User) -> int:
    """production → release 1; the working copy then changes the shell fragment."""
    template(TEMPLATE)
    save("core", "Core.")
    save("shell", "Shell v1.")
    number = services.release_create(author=writer).release.number
    services.label_set(name="production", target={"release": number}, author=publisher)
    save("shell", "Shell v2.")
    return number


def test_impact_report_renders_recorded_contexts_by_frequency_and_test_contexts(
    released: int, writer: User, workdir: Path
) -> None:
    host = agent_host_ensure(name="host-1")
    owner = User.objects.get(username=host.username).pk
    for n in range(3):
        conversation(f"s{n}", workdir, owner_id=owner, provider="openai", tools=["shell"])
    conversation("plain", workdir, owner_id=owner, provider="openai")
    conversation("staging-only", workdir, label="staging", tools=["shell"])
    old = timezone.now() - timedelta(days=8)
    conversation("too-old", workdir, constructed_at=old, tools=["shell"], model="old")
    services.test_context_save(
        name="fixture",
        fields={"cwd": str(workdir), "tools": ["shell"], "values": {"file:AGENTS.md": "Mine."}},
        author=writer,
    )

    report = impact_report(label="production", candidate="latest")

    rows = [(row.origin, row.impact.conversations, row.impact.changed) for row in report.contexts]
    assert rows == [("recorded", 3, True), ("recorded", 1, False), ("test", 0, True)]
    first, second, fixture = report.contexts
    assert (first.agent_host, first.tools, first.before, first.arm) == (
        "host-1",
        ("shell",),
        1,
        None,
    )
    assert first.conversation_id == "s2"
    assert "-Shell v1.\n+Shell v2.\n" in first.impact.diff
    assert first.impact.prompt_after == (
        "Root.\nCore.\nShell v2.\nRun the tests before you commit."
    )
    assert fixture.impact.prompt_after == "Root.\nCore.\nShell v2.\nMine."
    assert (first.host_values, fixture.host_values) == ("server", "supplied")
    assert first.impact.key.startswith("recorded:") and fixture.impact.key == "test:fixture"
    summary = report.summary
    assert (summary.contexts, summary.contexts_changed) == (3, 2)
    assert (summary.conversations, summary.conversations_changed) == (4, 3)
    assert summary.share_changed == 0.75
    assert report.current.pointers == (released,)
    assert second.impact.diagnostics == ()


def test_impact_report_window_days_widens_the_window(released: int, workdir: Path) -> None:
    conversation("old", workdir, constructed_at=timezone.now() - timedelta(days=20))

    assert impact_report(label="production", candidate="latest").contexts == ()
    assert len(impact_report(label="production", candidate="latest", window_days=30).contexts) == 1


def test_impact_report_renders_each_arm_of_a_split_with_its_share(
    released: int, publisher: User, workdir: Path
) -> None:
    split = {
        "split": [{"release": released, "weight": 7000}, {"release": "latest", "weight": 3000}]
    }
    services.label_set(name="production", target=split, author=publisher)
    for n in range(10):
        conversation(f"c{n}", workdir, tools=["shell"])

    report = impact_report(label="production", candidate="latest")

    rows = [
        (row.arm, row.before, row.impact.conversations, row.impact.changed)
        for row in report.contexts
    ]
    assert rows == [(0, released, 7, True), (1, LATEST, 3, False)]
    assert report.summary.share_changed == 0.7
    assert [row.impact.key.rsplit("#", 1)[1] for row in report.contexts] == ["arm-0", "arm-1"]


def test_impact_report_candidate_release_against_latest(writer: User, workdir: Path) -> None:
    template("[fragment:core]")
    save("core", "one")
    first = services.release_create(author=writer).release.number
    save("core", "two")
    conversation("c1", workdir)

    report = impact_report(label="production", candidate=first)

    [row] = report.contexts
    assert (row.impact.prompt_before, row.impact.prompt_after) == ("two", "one")
    assert report.candidate == first


def test_impact_report_keeps_only_the_most_frequent_contexts(released: int, workdir: Path) -> None:
    now = timezone.now()
    ConversationPrompt.objects.bulk_create(
        ConversationPrompt(
            prompt=default_prompt(),
            conversation_id=f"c{n}",
            cwd=str(workdir),
            model=f"m{n}",
            constructed_at=now,
            created_at=now,
            label="production",
        )
        for n in range(IMPACT_MAX_CONTEXTS + 5)
    )
    conversation("twice-a", workdir, model="m7")

    report = impact_report(label="production", candidate="latest")

    assert len(report.contexts) == IMPACT_MAX_CONTEXTS
    assert report.contexts[0].model == "m7"
    assert report.contexts[0].impact.conversations == 2


def test_impact_report_says_when_a_recorded_cwd_no_longer_passes(
    released: int, workdir: Path, allowed_root: Path
) -> None:
    conversation("gone", allowed_root / "deleted-since", tools=["shell"])

    [row] = impact_report(label="production", candidate="latest").contexts

    assert row.note is not None and "is not an existing directory" in row.note
    assert row.impact.prompt_after == "Root.\nCore.\nShell v2.\n"


def test_impact_report_applies_the_owner_instance_override_and_the_thread_override(
    released: int, writer: User, workdir: Path
) -> None:
    host = agent_host_ensure(name="host-1")
    library.host_override_set(
        prompt_id=default_prompt().pk, username=host.username, override="Instance.", author=writer
    )
    owner = User.objects.get(username=host.username).pk
    conversation("c1", workdir, owner_id=owner, override={"content": "Thread."})

    [row] = impact_report(label="production", candidate="latest").contexts

    assert row.impact.prompt_before is not None
    assert row.impact.prompt_before.endswith("\n\nInstance.\n\nThread.")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"label": "nope", "candidate": "latest"}, "label"),
        ({"label": "Bad", "candidate": "latest"}, "label"),
        ({"label": "production", "candidate": "main"}, "candidate"),
        ({"label": "production", "candidate": 0}, "candidate"),
        ({"label": "production", "candidate": "latest", "window_days": 0}, "window_days"),
        ({"label": "production", "candidate": "latest", "window_days": 366}, "window_days"),
        ({"label": "production", "candidate": "latest", "window_days": "7"}, "window_days"),
    ],
)
def test_impact_report_refuses_bad_input_naming_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        impact_report(**body)

    assert caught.value.field == field


def test_impact_report_unknown_candidate_release_is_not_found() -> None:
    with pytest.raises(ReleaseNotFound):
        impact_report(label="production", candidate=4)


def test_impact_report_renders_a_test_context_without_a_cwd_with_its_values_alone(
    released: int, writer: User, workdir: Path
) -> None:
    template("[prompt:cwd] [git:branch][file:AGENTS.md][system:os]")
    services.test_context_save(
        name="central",
        fields={"values": {"git:branch": "main", "prompt:cwd": "/home/ada/app"}},
        author=writer,
    )

    [row] = impact_report(label="production", candidate="latest").contexts

    assert (row.origin, row.cwd, row.host_values, row.impact.problem) == (
        "test",
        None,
        "supplied",
        None,
    )
    assert row.impact.prompt_after == "/home/ada/app main"  # nothing read on this server
