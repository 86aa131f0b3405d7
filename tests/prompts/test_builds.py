"""What a conversation is built from (releases §2): the services call the caller's
chooser only when they render, and store what it chose with the prompt."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from sysprompt.prompts import rendering, services
from sysprompt.prompts.builds import Build
from sysprompt.prompts.models import ConversationPrompt, Prompt
from sysprompt.prompts.selectors import CurrentTemplate
from sysprompt_core.library import FragmentVariant, MemorySource, VariantKey

pytestmark = pytest.mark.django_db


class Recording:
    """A chooser of a fixed build that records every call (who it was asked for)."""

    def __init__(self, text: str = "Built [fragment:core].", arm: int | None = 1) -> None:
        core = FragmentVariant("core", VariantKey(None, None), 7, "from the release")
        self.build = Build(
            template=CurrentTemplate(text=text, version=0, updated_at=None, author=None),
            library=MemorySource([core]),
            label="canary",
            release=3,
            arm=arm,
        )
        self.calls: list[tuple[str, int | None]] = []
        self.prompts: list[str | None] = []

    def __call__(
        self, *, conversation_id: str, owner_id: int | None, prompt: Prompt | None = None
    ) -> Build:
        self.calls.append((conversation_id, owner_id))
        self.prompts.append(None if prompt is None else prompt.name)
        return self.build


@pytest.fixture
def host(db: None) -> User:
    return User.objects.create_user("host")


def test_first_turn_builds_from_the_chosen_template_and_library_and_records_it(
    host: User, workdir: Path
) -> None:
    chooser = Recording()

    stored = services.conversation_prompt_resolve(
        conversation_id="c1", cwd=str(workdir), user=host, build=chooser
    )

    row = ConversationPrompt.objects.get()
    assert stored.created
    assert row.system_prompt == "Built from the release."
    assert (row.label, row.release, row.arm) == ("canary", 3, 1)
    assert row.fragments_used == [{"name": "core", "provider": None, "model": None, "version": 7}]
    assert chooser.calls == [("c1", host.pk)]


def test_later_turn_never_calls_the_chooser_and_reads_one_row(host: User, workdir: Path) -> None:
    services.conversation_prompt_resolve(
        conversation_id="c1", cwd=str(workdir), user=host, build=Recording()
    )
    later = Recording("Something else entirely.")

    with CaptureQueriesContext(connection) as queries:
        stored = services.conversation_prompt_resolve(
            conversation_id="c1", cwd=str(workdir), user=host, build=later
        )

    assert later.calls == []
    assert stored.prompt.system_prompt == "Built from the release."
    [query] = queries.captured_queries
    assert query["sql"].startswith("SELECT") and "conversation_id" in query["sql"]


def test_construct_of_someone_elses_conversation_asks_for_its_owner(
    host: User, workdir: Path
) -> None:
    author = User.objects.create_superuser("boss")
    services.conversation_prompt_resolve(conversation_id="c1", cwd=str(workdir), user=host)
    chooser = Recording(arm=None)

    services.conversation_prompt_construct(
        conversation_id="c1", cwd=str(workdir), user=author, build=chooser
    )

    row = ConversationPrompt.objects.get()
    assert chooser.calls == [("c1", host.pk)]
    assert chooser.prompts == ["default"]
    assert (row.owner_id, row.label, row.release, row.arm) == (host.pk, "canary", 3, None)


def test_compaction_preview_renders_what_the_chooser_gives(host: User, workdir: Path) -> None:
    services.conversation_prompt_resolve(conversation_id="c1", cwd=str(workdir), user=host)

    preview = rendering.compaction_preview(ConversationPrompt.objects.get(), build=Recording())

    assert preview.fresh is not None
    assert preview.fresh.prompt == "Built from the release."


def test_without_a_chooser_the_working_copy_is_production_latest(host: User, workdir: Path) -> None:
    services.conversation_prompt_resolve(conversation_id="c1", cwd=str(workdir), user=host)

    row = ConversationPrompt.objects.get()
    assert (row.label, row.release, row.arm) == ("production", None, None)


# --- the migration ------------------------------------------------------------------------


@pytest.fixture
def before_labels() -> Iterator[MigrationExecutor]:
    executor = MigrationExecutor(connection)
    executor.migrate([("sysprompt", "0004_conversationprompt_shared_prefix_chars")])
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_migration_0005_keeps_every_row_as_built_by_production(
    before_labels: MigrationExecutor,
) -> None:
    old = before_labels.loader.project_state(
        [("sysprompt", "0004_conversationprompt_shared_prefix_chars")]
    ).apps
    now = datetime.now(UTC)
    for n in range(3):
        old.get_model("sysprompt", "ConversationPrompt").objects.create(
            conversation_id=f"before-labels-{n}",
            system_prompt=f"kept byte for byte {n}\r\n",
            cwd="/somewhere",
            constructed_at=now,
            created_at=now,
        )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = ConversationPrompt.objects.order_by("conversation_id")
    assert [(r.system_prompt, r.label, r.release, r.arm) for r in rows] == [
        (f"kept byte for byte {n}\r\n", "production", None, None) for n in range(3)
    ]
