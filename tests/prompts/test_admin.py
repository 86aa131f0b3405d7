"""The Django admin, through the real admin site and the Django test client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings

from sysprompt.accounts import services as accounts
from sysprompt.prompts import services
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion

pytestmark = pytest.mark.django_db

VERSIONS = "/admin/sysprompt/templateversion/"
PROMPTS = "/admin/sysprompt/conversationprompt/"


@pytest.fixture
def superuser() -> User:
    return User.objects.create_superuser("root", "", "s3cret-pass-word")


@pytest.fixture
def admin_client(client: Client, superuser: User) -> Client:
    client.force_login(superuser)
    return client


@pytest.fixture
def project(tmp_path: Path, settings: Settings) -> Path:
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(tmp_path)]}
    (tmp_path / "AGENTS.md").write_text("Use <tabs> & spaces.\n")
    return tmp_path


def _resolve(project: Path, conversation_id: str, model: str = "m-1") -> ConversationPrompt:
    """A first turn, as the agent host ``host-a`` makes it."""
    host, _ = User.objects.get_or_create(username="host-a")
    stored = services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(project), model=model, user=host
    )
    return stored.prompt


def _versions(count: int) -> None:
    for index in range(count):
        services.template_save(text=f"Version body {index}\n[prompt:cwd]\n")


def _prompts(project: Path, count: int) -> None:
    start = ConversationPrompt.objects.count()
    for index in range(start, start + count):
        _resolve(project, f"conv-{index}")


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


# template versions: list


def test_version_changelist_renders_when_versions_exist(
    admin_client: Client, superuser: User
) -> None:
    services.template_save(text="\n\n  First words here  \nmore\n", author=superuser)
    services.template_save(text="")

    response = admin_client.get(VERSIONS)

    assert response.status_code == 200
    content = response.content.decode()
    assert "First words here" in content
    assert "(empty: no system prompt)" in content
    assert "28 characters" in content
    assert "root" in content
    assert [row.number for row in response.context["cl"].result_list] == [2, 1]


def test_version_changelist_says_blank_when_text_starts_blank(admin_client: Client) -> None:
    services.template_save(text=" \n" * 300 + "late words")

    content = admin_client.get(VERSIONS).content.decode()

    assert "(the first 400 characters are blank)" in content


def test_version_changelist_shortens_first_line_when_long(admin_client: Client) -> None:
    services.template_save(text="x" * 500 + "\nsecond line")

    content = admin_client.get(VERSIONS).content.decode()

    assert "x" * 79 + "…" in content
    assert "x" * 80 not in content
    assert "second line" not in content


@pytest.mark.parametrize(
    ("url", "make"),
    [
        (VERSIONS, lambda project, count: _versions(count)),
        (PROMPTS, _prompts),
        (PROMPTS + "?template_version=1", _prompts),
        (PROMPTS + "?q=conv-1", _prompts),
    ],
)
def test_changelist_queries_constant_when_rows_grow(
    admin_client: Client, project: Path, url: str, make: Callable[[Path, int], None]
) -> None:
    services.template_save(text="[prompt:model] in [prompt:cwd]")
    make(project, 3)
    few = _queries(admin_client, url)

    make(project, 12)

    assert _queries(admin_client, url) == few


# template versions: add


def test_version_add_page_starts_from_current_template_when_opened(admin_client: Client) -> None:
    services.template_save(text="Current <b>template</b>\n")

    response = admin_client.get(VERSIONS + "add/")

    assert response.status_code == 200
    assert "Current &lt;b&gt;template&lt;/b&gt;\n</textarea>" in response.content.decode()


def test_version_add_page_starts_from_version_when_from_given(admin_client: Client) -> None:
    services.template_save(text="old text")
    services.template_save(text="new text")

    content = admin_client.get(VERSIONS + "add/?from=1").content.decode()

    assert "old text</textarea>" in content


def test_version_add_creates_next_version_with_author_when_posted(
    admin_client: Client, superuser: User
) -> None:
    services.template_save(text="one")
    services.template_save(text="two")

    response = admin_client.post(VERSIONS + "add/", {"template": "Hi\r\n[prompt:cwd]\r\n"})

    assert response.status_code == 302
    assert response["Location"] == VERSIONS
    newest = TemplateVersion.objects.latest()
    assert (newest.number, newest.author, newest.text) == (3, superuser, "Hi\n[prompt:cwd]\n")
    entry = LogEntry.objects.get()
    assert (entry.action_flag, entry.object_id) == (ADDITION, str(newest.pk))


def test_version_add_creates_first_version_when_template_empty(admin_client: Client) -> None:
    response = admin_client.post(VERSIONS + "add/", {"template": ""})

    assert response.status_code == 302
    assert TemplateVersion.objects.get().text == ""


def test_version_add_refuses_when_template_too_large(
    admin_client: Client, settings: Settings
) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 10}

    response = admin_client.post(VERSIONS + "add/", {"template": "é" * 6})

    assert response.status_code == 200
    assert "the limit is 10 bytes" in response.content.decode()
    assert not TemplateVersion.objects.exists()


def test_version_add_allowed_when_prompt_author(client: Client) -> None:
    accounts.groups_ensure()
    author = User.objects.create_user("ada", "", "pw-for-ada-123", is_staff=True)
    author.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    client.force_login(author)

    response = client.post(VERSIONS + "add/", {"template": "by ada"})

    assert response.status_code == 302
    assert TemplateVersion.objects.get().author == author


def test_version_add_forbidden_when_staff_without_permission(client: Client) -> None:
    staff = User.objects.create_user("bob", "", "pw-for-bob-123", is_staff=True)
    client.force_login(staff)

    response = client.post(VERSIONS + "add/", {"template": "by bob"})

    assert response.status_code == 403
    assert not TemplateVersion.objects.exists()


# template versions: read-only, never deleted


def test_version_change_view_read_only_when_superuser(admin_client: Client) -> None:
    version = services.template_save(text="Keep <this>\n  indented\n")

    response = admin_client.get(f"{VERSIONS}{version.pk}/change/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "Keep &lt;this&gt;\n  indented\n</pre>" in content
    assert "<textarea" not in content
    assert 'name="_save"' not in content
    assert "start a new version from this one" in content
    assert "Delete" not in content


def test_version_change_view_refuses_post_when_superuser(admin_client: Client) -> None:
    version = services.template_save(text="original")

    response = admin_client.post(f"{VERSIONS}{version.pk}/change/", {"template": "changed"})

    assert response.status_code == 403
    assert TemplateVersion.objects.get().text == "original"


@pytest.mark.parametrize("method", ["get", "post"])
def test_version_delete_view_refused_when_superuser(admin_client: Client, method: str) -> None:
    version = services.template_save(text="stays")

    response = getattr(admin_client, method)(f"{VERSIONS}{version.pk}/delete/", {"post": "yes"})

    assert response.status_code == 403
    assert TemplateVersion.objects.filter(pk=version.pk).exists()


def test_version_bulk_delete_unavailable_when_superuser(admin_client: Client) -> None:
    version = services.template_save(text="stays")

    listing = admin_client.get(VERSIONS)
    response = admin_client.post(
        VERSIONS,
        {"action": "delete_selected", "_selected_action": [version.pk], "post": "yes"},
    )

    assert "delete_selected" not in listing.content.decode()
    assert response.status_code in (200, 302)
    assert TemplateVersion.objects.filter(pk=version.pk).exists()


def test_version_detail_links_conversations_when_built_from_it(
    admin_client: Client, project: Path
) -> None:
    version = services.template_save(text="[prompt:model]")
    _prompts(project, 2)

    content = admin_client.get(f"{VERSIONS}{version.pk}/change/").content.decode()

    assert f'<a href="{PROMPTS}?template_version=1">2</a>' in content


# conversation prompts


def test_prompt_changelist_renders_when_prompts_exist(admin_client: Client, project: Path) -> None:
    row = _resolve(project, "c-42", model="claude-x")
    assert row.sha256 is not None

    response = admin_client.get(PROMPTS)

    assert response.status_code == 200
    content = response.content.decode()
    assert "c-42" in content
    assert "claude-x" in content
    assert str(project) in content
    assert f'<code title="{row.sha256}">{row.sha256[:12]}</code>' in content
    assert "default" in content  # built from the built-in default template
    assert "Use &lt;tabs&gt;" not in content  # no prompt text on the list
    assert "constructed_at__year" in content  # the date hierarchy


def test_prompt_changelist_finds_exact_id_when_searched(
    admin_client: Client, project: Path
) -> None:
    for conversation_id in ("c-1", "c-10", "C-1"):
        _resolve(project, conversation_id)

    response = admin_client.get(PROMPTS + "?q=c-1")

    assert [row.conversation_id for row in response.context["cl"].result_list] == ["c-1"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [("", ["v2", "v1", "default"]), ("0", ["default"]), ("1", ["v1"]), ("2", ["v2"]), ("x", [])],
)
def test_prompt_changelist_filters_when_template_version_given(
    admin_client: Client, project: Path, query: str, expected: list[str]
) -> None:
    _resolve(project, "default")
    services.template_save(text="one")
    _resolve(project, "v1")
    services.template_save(text="two")
    _resolve(project, "v2")

    url = PROMPTS + (f"?template_version={query}" if query else "")
    response = admin_client.get(url)

    assert response.status_code == 200
    assert [row.conversation_id for row in response.context["cl"].result_list] == expected


def test_prompt_detail_shows_prompt_read_only_when_superuser(
    admin_client: Client, project: Path
) -> None:
    services.template_save(text="Rules:\n[file:AGENTS.md]\n")
    row = _resolve(project, "c-7")
    version = TemplateVersion.objects.get()

    response = admin_client.get(f"{PROMPTS}{row.pk}/change/")

    assert response.status_code == 200
    content = response.content.decode()
    assert "Rules:\nUse &lt;tabs&gt; &amp; spaces.\n</pre>" in content
    assert f'<a href="{VERSIONS}{version.pk}/change/">version 1</a>' in content
    assert "<textarea" not in content
    assert 'name="_save"' not in content
    owner = User.objects.get(username="host-a")
    owner_link = f'<a href="/admin/auth/user/{owner.pk}/change/">host-a</a>'
    assert f'<div class="readonly">{owner_link}</div>' in content  # the owner, read-only


def test_prompt_changelist_shows_owner_when_prompts_exist(
    admin_client: Client, project: Path
) -> None:
    _resolve(project, "c-owned")

    content = admin_client.get(PROMPTS).content.decode()

    assert '<td class="field-owner nowrap">host-a</td>' in content


def test_prompt_detail_says_no_prompt_when_null(admin_client: Client, project: Path) -> None:
    services.template_save(text="   \n")
    row = _resolve(project, "c-empty")

    content = admin_client.get(f"{PROMPTS}{row.pk}/change/").content.decode()

    assert "No system prompt: the template rendered to nothing." in content


def test_prompt_change_refused_when_posted(admin_client: Client, project: Path) -> None:
    row = _resolve(project, "c-8")

    response = admin_client.post(f"{PROMPTS}{row.pk}/change/", {"cwd": "/elsewhere"})

    assert response.status_code == 403
    assert ConversationPrompt.objects.get().cwd == str(project)


def test_prompt_add_refused_when_superuser(admin_client: Client) -> None:
    assert admin_client.get(PROMPTS + "add/").status_code == 403


def test_prompt_delete_forgets_conversation_when_confirmed(
    admin_client: Client, project: Path
) -> None:
    row = _resolve(project, "c-9")
    _resolve(project, "c-keep")

    page = admin_client.get(f"{PROMPTS}{row.pk}/delete/")
    response = admin_client.post(f"{PROMPTS}{row.pk}/delete/", {"post": "yes"})

    assert page.status_code == 200
    assert response.status_code == 302
    assert list(ConversationPrompt.objects.values_list("conversation_id", flat=True)) == ["c-keep"]


def test_prompt_delete_forgets_that_hosts_row_when_another_host_uses_the_id(
    admin_client: Client, project: Path
) -> None:
    _resolve(project, "conv-42")
    other, _ = User.objects.get_or_create(username="host-b")
    theirs = services.conversation_prompt_resolve(
        conversation_id="conv-42", cwd=str(project), user=other
    ).prompt

    response = admin_client.post(f"{PROMPTS}{theirs.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    owners = ConversationPrompt.objects.values_list("owner__username", flat=True)
    assert list(owners) == ["host-a"]


def test_prompt_bulk_delete_forgets_selected_when_confirmed(
    admin_client: Client, project: Path
) -> None:
    rows = [_resolve(project, f"c-{index}") for index in range(3)]

    response = admin_client.post(
        PROMPTS,
        {
            "action": "delete_selected",
            "_selected_action": [rows[0].pk, rows[2].pk],
            "post": "yes",
        },
    )

    assert response.status_code == 302
    assert list(ConversationPrompt.objects.values_list("conversation_id", flat=True)) == ["c-1"]
