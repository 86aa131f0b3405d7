"""The shared prefix (agent-hosts.md §1), server side: recorded with the conversation at
construction, carried by every answer that carries a prompt, shown by the preview with
the tag where it ends, and the same for every conversation of one agent host, provider
and model whatever their working directories and branches.

Real repositories (git), real files, the real API and database.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.test import APIClient

from sysprompt.accounts.services import AgentHost
from sysprompt.prompts.models import ConversationPrompt
from sysprompt_core.tokens import encoding
from tests.api.library_support import put_fragment

pytestmark = pytest.mark.django_db

CONVERSATION = "/api/conversations/{}/system-prompt"
PREVIEW = "/api/system-prompt/preview"
OVERRIDE = "/api/agent-hosts/{}/override"

HEADER = "You are a careful coding assistant.\n" + "Follow the house style.\n" * 3
TEMPLATE = (
    HEADER
    + "Model: [prompt:model] on [system:os].\n"
    + "Branch: [git:branch]\n"
    + "[file:AGENTS.md]\n"
    + "Time: [system:time]\n"
)
END_LINE = HEADER.count("\n") + 2  # the "Branch:" line


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


def project(root: Path, name: str, branch: str) -> Path:
    path = root / name
    path.mkdir()
    (path / "AGENTS.md").write_text(f"The rules of {name}.\n")
    git(path, "init", "--quiet", f"--initial-branch={branch}")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def set_template(client: APIClient, text: str) -> None:
    assert client.put("/api/system-prompt", {"template": text}, format="json").status_code == 200


def post(client: APIClient, action: str, cwd: Path, cid: str = "c1", **body: Any) -> Any:
    response = client.post(
        CONVERSATION.format(cid) + f"/{action}", {"cwd": str(cwd), **body}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


def preview(client: APIClient, cwd: Path, template: str, **body: Any) -> Any:
    response = client.post(PREVIEW, {"cwd": str(cwd), "template": template, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def two_projects(allowed_root: Path) -> tuple[Path, Path]:
    return project(allowed_root, "alpha", "main"), project(allowed_root, "beta", "feature/b")


def shared_part(prompt: str) -> int:
    """Where TEMPLATE's shared part ends in ``prompt``: right after "Branch: "."""
    return prompt.index("Branch: ") + len("Branch: ")


# --- the same for every conversation of a host, provider and model -----------------------


def test_two_conversations_share_exactly_the_recorded_prefix(
    host_client: APIClient, author_client: APIClient, two_projects: tuple[Path, Path]
) -> None:
    set_template(author_client, TEMPLATE)
    alpha, beta = two_projects
    context = {"model": "claude-sonnet", "provider": "anthropic"}

    first = post(host_client, "resolve", alpha, "conv-alpha", **context)
    second = post(host_client, "resolve", beta, "conv-beta", **context)

    n = first["shared_prefix_chars"]
    a, b = first["system_prompt"], second["system_prompt"]
    assert n == second["shared_prefix_chars"] == shared_part(a) > len(HEADER)
    assert a[:n] == b[:n]
    assert a[n:].startswith("main\n") and b[n:].startswith("feature/b\n")
    assert a != b


def test_the_prefix_is_stored_with_the_conversation(
    host_client: APIClient, author_client: APIClient, two_projects: tuple[Path, Path]
) -> None:
    set_template(author_client, TEMPLATE)
    answer = post(host_client, "resolve", two_projects[0])

    row = ConversationPrompt.objects.get(conversation_id="c1")

    assert row.shared_prefix_chars == answer["shared_prefix_chars"]
    assert host_client.get(CONVERSATION.format("c1")).json()["shared_prefix_chars"] == (
        row.shared_prefix_chars
    )


def test_construct_and_compact_answer_it_and_the_compaction_prompt_shares_it(
    host_client: APIClient, author_client: APIClient, two_projects: tuple[Path, Path]
) -> None:
    set_template(author_client, TEMPLATE)
    built = post(host_client, "construct", two_projects[0])
    compacted = post(host_client, "compact", two_projects[0])

    n = compacted["shared_prefix_chars"]
    assert built["shared_prefix_chars"] == n == shared_part(built["system_prompt"])
    assert compacted["system_prompt"][:n] == compacted["persisted_system_prompt"][:n]
    assert ConversationPrompt.objects.get().shared_prefix_chars == n


def test_a_template_without_per_conversation_values_is_shared_whole(
    host_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, "Static text on [system:os] for [prompt:model].\n")

    answer = post(host_client, "resolve", workdir, model="m")

    assert answer["shared_prefix_chars"] == len(answer["system_prompt"])


def test_the_default_template_shares_its_first_line(host_client: APIClient, workdir: Path) -> None:
    answer = post(host_client, "resolve", workdir)

    assert answer["shared_prefix_chars"] == len("You are a helpful coding assistant.\n")


def test_a_null_prompt_shares_nothing(
    host_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, "")

    assert post(host_client, "resolve", workdir)["shared_prefix_chars"] == 0


def test_a_fragment_carries_the_prefix_into_it(
    host_client: APIClient, author_client: APIClient, two_projects: tuple[Path, Path]
) -> None:
    put_fragment(author_client, "env", "Environment notes. Branch [git:branch].")
    set_template(author_client, "Start.\n[fragment:env]\nEnd.")

    first = post(host_client, "resolve", two_projects[0], "f1")
    second = post(host_client, "resolve", two_projects[1], "f2")

    n = len("Start.\nEnvironment notes. Branch ")
    assert first["shared_prefix_chars"] == second["shared_prefix_chars"] == n
    assert first["system_prompt"][:n] == second["system_prompt"][:n]


# --- overrides move it, or end it ---------------------------------------------------------


@pytest.mark.usefixtures("author_publishes")
def test_an_instance_override_before_the_template_moves_it_by_its_length(
    host: AgentHost,
    host_client: APIClient,
    author_client: APIClient,
    two_projects: tuple[Path, Path],
) -> None:
    set_template(author_client, TEMPLATE)
    plain = post(host_client, "resolve", two_projects[0], "before")
    override = {"content": "House rules of this host.", "strategy": "prepend"}
    assert (
        author_client.put(
            OVERRIDE.format(host.username), {"override": override}, format="json"
        ).status_code
        == 200
    )

    first = post(host_client, "resolve", two_projects[0], "after-1")
    second = post(host_client, "resolve", two_projects[1], "after-2")

    moved = plain["shared_prefix_chars"] + len(override["content"]) + len("\n\n")
    assert first["shared_prefix_chars"] == second["shared_prefix_chars"] == moved
    assert first["system_prompt"][:moved] == second["system_prompt"][:moved]


def test_a_thread_override_after_changes_nothing_and_before_ends_it_at_0(
    host_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, TEMPLATE)
    plain = post(host_client, "resolve", workdir, "plain")
    after = post(host_client, "resolve", workdir, "after", override="Be brief.")
    before = post(
        host_client,
        "resolve",
        workdir,
        "before",
        override={"content": "Be brief.", "strategy": "prepend"},
    )

    assert after["shared_prefix_chars"] == plain["shared_prefix_chars"] > 0
    assert before["shared_prefix_chars"] == 0


def test_a_call_override_answers_its_own_prefix_and_the_stored_one(
    host_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, TEMPLATE)
    stored = post(host_client, "resolve", workdir)

    prepended = post(
        host_client,
        "resolve",
        workdir,
        call_override={"content": "Only this turn.", "strategy": "prepend"},
    )
    appended = post(host_client, "resolve", workdir, call_override="Only this turn.")

    n = stored["shared_prefix_chars"]
    assert (prepended["shared_prefix_chars"], prepended["persisted_shared_prefix_chars"]) == (0, n)
    assert (appended["shared_prefix_chars"], appended["persisted_shared_prefix_chars"]) == (n, n)
    assert "persisted_shared_prefix_chars" not in stored


# --- the preview: how much, how many tokens, and where it ends ----------------------


def test_preview_shows_the_prefix_its_tokens_and_the_tag_that_ends_it(
    host_client: APIClient, two_projects: tuple[Path, Path]
) -> None:
    shown = preview(host_client, two_projects[0], TEMPLATE, model="m")

    n = shown["shared_prefix_chars"]
    assert n == shared_part(shown["system_prompt"])
    o200k = encoding("o200k_base")
    assert shown["shared_prefix_tokens"] == len(o200k.encode_ordinary(shown["system_prompt"][:n]))
    assert shown["system_prompt_tokens"] == len(o200k.encode_ordinary(shown["system_prompt"]))
    # Model "m" of no provider: an estimate, and said to be one.
    assert (shown["tokens_exact"], shown["tokens_encoding"]) == (False, "o200k_base")
    assert shown["shared_prefix_end"] == {
        "key": "git:branch",
        "line": END_LINE,
        "column": len("Branch: ") + 1,
    }


def test_preview_of_a_block_on_a_per_conversation_value_ends_at_the_block(
    host_client: APIClient, workdir: Path
) -> None:
    shown = preview(host_client, workdir, "Intro.\n  [if file:AGENTS.md]Rules.[endif] Tail.")

    assert shown["shared_prefix_chars"] == len("Intro.\n  ")
    assert shown["shared_prefix_end"] == {"key": "file:AGENTS.md", "line": 2, "column": 3}


def test_preview_of_a_whole_shared_prompt_has_no_end(host_client: APIClient, workdir: Path) -> None:
    shown = preview(host_client, workdir, "All static.")

    assert (shown["shared_prefix_chars"], shown["shared_prefix_end"]) == (11, None)


def test_preview_with_a_thread_override_before_has_no_tag_to_show(
    host_client: APIClient, workdir: Path
) -> None:
    shown = preview(
        host_client,
        workdir,
        "Static [system:time]",
        override={"content": "First.", "strategy": "prepend"},
    )

    assert (shown["shared_prefix_chars"], shown["shared_prefix_end"]) == (0, None)


def test_library_preview_shows_the_prefix_too(
    host_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    put_fragment(author_client, "env", "Static.\n[prompt:cwd]")

    response = host_client.post(
        "/api/library/preview", {"cwd": str(workdir), "fragment": "env"}, format="json"
    )

    assert response.json()["shared_prefix_chars"] == len("Static.\n")
    assert response.json()["shared_prefix_end"] == {"key": "prompt:cwd", "line": 2, "column": 1}


def test_lint_hints_when_a_per_conversation_value_comes_early(
    host_client: APIClient, workdir: Path
) -> None:
    early = "Now: [system:time]\n" + "Long static instructions.\n" * 60
    late = "Long static instructions.\n" * 60 + "Now: [system:time]\n"

    hinted = preview(host_client, workdir, early)["diagnostics"]
    quiet = preview(host_client, workdir, late)["diagnostics"]

    [hint] = [d for d in hinted if "shared prefix" in d["message"]]
    assert (hint["severity"], hint["line"], hint["column"]) == ("warning", 1, len("Now: ") + 1)
    assert not [d for d in quiet if "shared prefix" in d["message"]]


def test_editor_preview_says_how_much_is_shared_and_where_it_ends(
    author: Any, two_projects: tuple[Path, Path]
) -> None:
    web = Client()
    web.force_login(author)

    response = web.post(
        "/editor/preview",
        {"template": TEMPLATE, "cwd": str(two_projects[0])},
        HTTP_HX_REQUEST="true",
    )

    shared = response.context["shared_prefix"]
    html = response.content.decode()
    assert shared["characters"] == shared_part(response.context["prompt"])
    assert shared["end"].key == "git:branch"
    assert f"The first {shared['characters']} characters" in html
    assert f"ends at line {END_LINE}: <code>[git:branch]</code>" in html


def test_editor_preview_of_a_whole_shared_prompt(author: Any, workdir: Path) -> None:
    web = Client()
    web.force_login(author)

    response = web.post(
        "/editor/preview", {"template": "All static.", "cwd": str(workdir)}, HTTP_HX_REQUEST="true"
    )

    assert "All 11 characters" in response.content.decode()


# --- prompts stored before it was recorded ------------------------------------------------


@pytest.fixture
def before_0004() -> Iterator[MigrationExecutor]:
    executor = MigrationExecutor(connection)
    executor.migrate([("sysprompt", "0003_library_context")])
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_migration_0004_keeps_every_row_with_no_prefix_until_constructed(
    before_0004: MigrationExecutor, host: AgentHost, host_client: APIClient, workdir: Path
) -> None:
    old = before_0004.loader.project_state([("sysprompt", "0003_library_context")]).apps
    now = datetime.now(UTC)
    owner_id = User.objects.get(username=host.username).pk
    old.get_model("sysprompt", "ConversationPrompt").objects.create(
        conversation_id="old-one",
        system_prompt="kept byte for byte\r\n",
        sha256="x" * 64,
        cwd=str(workdir),
        constructed_at=now,
        created_at=now,
        owner_id=owner_id,
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    row = ConversationPrompt.objects.get(conversation_id="old-one")
    assert (row.system_prompt, row.shared_prefix_chars) == ("kept byte for byte\r\n", None)
    answer = host_client.get(CONVERSATION.format("old-one")).json()
    assert answer["shared_prefix_chars"] is None
    resolved = post(host_client, "resolve", workdir, "old-one")
    assert resolved["shared_prefix_chars"] is None  # a later turn: the row as stored
    called = post(host_client, "resolve", workdir, "old-one", call_override="x")
    assert called["shared_prefix_chars"] is None
    rebuilt = post(host_client, "construct", workdir, "old-one")
    assert rebuilt["shared_prefix_chars"] == len("You are a helpful coding assistant.\n")
