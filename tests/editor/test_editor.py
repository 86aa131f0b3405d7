"""The editor's pages and htmx partials, through Django's test client (no browser).

The browser tests (``tests/browser/``) prove the page works; these pin down what each
view answers: status codes, partials, headers, escaping, and that reads write nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.contrib.staticfiles import finders
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape
from pytest_django import Settings

from sysprompt.accounts import services as accounts
from sysprompt.prompts import selectors, services
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion
from sysprompt_core.variables import variable_catalog

PASSWORD = "s3cret-pass-word"
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def user(db: None) -> User:
    return User.objects.create_user("ada", "", PASSWORD)


@pytest.fixture
def author_web(author: User) -> Client:
    client = Client()
    client.force_login(author)
    return client


@pytest.fixture
def authors_web(db: None) -> Client:
    """A member of the "Prompt authors" group: sees, re-constructs and forgets every
    conversation (the Conversations pages need it)."""
    accounts.groups_ensure()
    member = User.objects.create_user("grace", "", PASSWORD)
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    client = Client()
    client.force_login(member)
    return client


@pytest.fixture
def viewer_web(agent_host: User) -> Client:
    """Logged in without the permission to change the template."""
    client = Client()
    client.force_login(agent_host)
    return client


def writes(queries: CaptureQueriesContext) -> list[str]:
    verbs = ("INSERT", "UPDATE", "DELETE")
    return [
        q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(verbs)
    ]


# --- login, pages ------------------------------------------------------------------


GET_URLS = [
    "/",
    "/editor/",
    "/editor/history",
    "/editor/history/1.json",
    "/editor/files?cwd=/tmp",
    "/conversations/",
    "/conversations/c1/",
]
POST_URLS = [
    "/editor/preview",
    "/editor/save",
    "/editor/history/1/diff",
    "/editor/cwd",
    "/conversations/c1/construct",
    "/conversations/c1/forget",
    "/conversations/c1/compaction",
]


@pytest.mark.django_db
@pytest.mark.parametrize("url", GET_URLS)
def test_page_redirects_to_login_when_anonymous(client: Client, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.django_db
@pytest.mark.parametrize("url", POST_URLS)
def test_write_redirects_to_login_when_anonymous(client: Client, url: str) -> None:
    response = client.post(url, {"template": "x"})

    assert response.status_code == 302
    assert TemplateVersion.objects.count() == 0


@pytest.mark.parametrize("url", POST_URLS)
def test_write_refused_without_csrf_token(author: User, url: str) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)

    response = client.post(url, {"template": "x", "cwd": "/tmp"})

    assert response.status_code == 403
    assert TemplateVersion.objects.count() == 0


@pytest.mark.django_db
def test_login_page_renders_when_anonymous(client: Client) -> None:
    response = client.get("/accounts/login/")

    assert response.status_code == 200
    assert "registration/login.html" in [t.name for t in response.templates]
    assert b'name="csrfmiddlewaretoken"' in response.content
    assert b"/static/css/app.css" in response.content


def test_login_redirects_to_main_page_when_credentials_valid(client: Client, user: User) -> None:
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_login_shows_error_when_credentials_wrong(client: Client, user: User) -> None:
    response = client.post("/accounts/login/", {"username": "ada", "password": "nope"})

    assert response.status_code == 200
    assert b'role="alert"' in response.content


def test_logout_shows_logged_out_page_when_posted(client: Client, user: User) -> None:
    client.force_login(user)

    response = client.post("/accounts/logout/")

    assert response.status_code == 200
    assert "registration/logged_out.html" in [t.name for t in response.templates]
    assert b'href="/accounts/login/"' in response.content
    assert client.get("/").status_code == 302


def test_main_page_denies_framing_when_served(client: Client, user: User) -> None:
    client.force_login(user)

    response = client.get("/")

    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "asset",
    [
        "css/app.css",
        "js/app.js",
        "editor/editor.js",
        "editor/codemirror.bundle.js",
        "vendor/htmx.min.js",
    ],
)
def test_static_asset_is_found_when_collected(asset: str) -> None:
    assert finders.find(asset)


@pytest.mark.parametrize(("url", "opens"), [("/", False), ("/editor/", True)])
def test_main_page_opens_modal_only_on_editor_url(
    author_web: Client, workdir: Path, url: str, opens: bool
) -> None:
    response = author_web.get(url)

    assert response.status_code == 200
    content = response.content.decode()
    assert ("data-open-on-load" in content) is opens
    config = response.context["config"]
    assert config["template"] == selectors.template_current().text
    assert config["etag"] == selectors.template_current().etag
    assert config["canEdit"] is True
    assert {entry["type"] for entry in config["catalog"]} >= {"system", "prompt", "git", "file"}


def test_main_page_renders_buttons_from_catalog(author_web: Client, workdir: Path) -> None:
    content = author_web.get("/editor/").content.decode()

    for entry in variable_catalog():
        if entry["dynamic"]:
            assert f'data-variable-dialog="{entry["type"]}"' in content
        else:
            assert f'data-insert="[{entry["type"]}:{entry["name"]}]"' in content
        assert f'title="{escape(entry["description"])}"' in content
    for block in ("if", "if-not", "if-else"):
        assert f'data-block="{block}"' in content


def test_main_page_config_escapes_template(author_web: Client, workdir: Path) -> None:
    services.template_save(text=f"{SCRIPT}\n[prompt:cwd]")

    content = author_web.get("/editor/").content.decode()

    assert SCRIPT not in content
    assert "\\u003Cscript\\u003Ealert(1)\\u003C/script\\u003E" in content  # json_script
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content  # the overview excerpt


def test_main_page_save_disabled_without_permission(viewer_web: Client, workdir: Path) -> None:
    response = viewer_web.get("/editor/")

    assert response.context["config"]["canEdit"] is False
    assert 'id="save-button" disabled' in response.content.decode()


# --- preview -------------------------------------------------------------------------


def preview(client: Client, **data: str) -> tuple[int, str, Any]:
    response = client.post("/editor/preview", data, HTTP_HX_REQUEST="true")
    return response.status_code, response.content.decode(), response.context


def test_preview_renders_text_against_cwd(author_web: Client, workdir: Path) -> None:
    status, content, context = preview(
        author_web, template="[if file:AGENTS.md]Rules: [file:AGENTS.md][endif]", cwd=str(workdir)
    )

    assert status == 200
    assert context["prompt"] == "Rules: Run the tests before you commit."
    assert 'id="preview-prompt"' in content
    assert context["characters"] == len("Rules: Run the tests before you commit.")
    # No provider or model: o200k_base, marked an estimate (not 39 characters ÷ 4 = 10).
    assert (context["tokens"].tokens, context["tokens"].exact) == (9, False)


def test_preview_persists_nothing(author_web: Client, workdir: Path) -> None:
    with CaptureQueriesContext(connection) as queries:
        status, _, _ = preview(author_web, template="[system:time] [prompt:cwd]", cwd=str(workdir))

    assert status == 200
    assert writes(queries) == []
    assert TemplateVersion.objects.count() == 0
    assert ConversationPrompt.objects.count() == 0


def test_preview_says_no_prompt_when_blank(author_web: Client, workdir: Path) -> None:
    status, content, context = preview(
        author_web, template="  \n[if file:nope]x[endif]\n", cwd=str(workdir)
    )

    assert status == 200
    assert context["prompt"] is None
    assert "No system prompt will be sent" in content


def test_preview_lists_every_variable_with_value_or_reason(
    author_web: Client, workdir: Path
) -> None:
    template = "[if file:AGENTS.md]a[else][file:missing.md][endif][git:branch][nope:x]"

    _, content, context = preview(author_web, template=template, cwd=str(workdir))

    variables = {v["key"]: v for v in context["variables"]}
    assert variables["file:AGENTS.md"]["value"] == "Run the tests before you commit."
    assert variables["file:missing.md"]["value"] is None
    assert variables["file:missing.md"]["reason"] == "no such file"
    assert variables["git:branch"]["value"] is None
    assert "not a git repository" in variables["git:branch"]["reason"]
    assert variables["nope:x"]["value"] is None
    assert "does not exist: no such file" in content


def test_preview_escapes_template_and_values(author_web: Client, workdir: Path) -> None:
    (workdir / "evil.md").write_text(f"{SCRIPT}\n")

    _, content, _ = preview(author_web, template=f"{SCRIPT} [file:evil.md]", cwd=str(workdir))

    assert SCRIPT not in content
    assert content.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3  # prompt, value, …


def test_preview_reports_diagnostics_with_line_and_column(
    author_web: Client, workdir: Path
) -> None:
    template = "one\ntwo\n[if file:AGENTS.md]\nthree\n"

    _, content, context = preview(author_web, template=template, cwd=str(workdir))

    assert [(d.line, d.column, d.severity) for d in context["diagnostics"]] == [(3, 1, "error")]
    assert 'data-line="3" data-column="1"' in content
    start = content.index('id="preview-diagnostics-data"')
    data = json.loads(content[content.index(">", start) + 1 : content.index("</script>", start)])
    assert data == [{"line": 3, "column": 1, "severity": "error", "message": data[0]["message"]}]
    assert "never closed" in data[0]["message"]


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("", "Give the absolute path"),
        ("relative/dir", "is not an absolute path"),
        ("/", "outside the allowed roots"),
        ("{root}/missing", "is not an existing directory"),
    ],
)
def test_preview_explains_bad_cwd_and_still_lints(
    author_web: Client, allowed_root: Path, cwd: str, expected: str
) -> None:
    status, content, context = preview(
        author_web, template="[if x:y]", cwd=cwd.format(root=allowed_root)
    )

    assert status == 200
    assert expected in context["errors"]["cwd"]
    assert 'data-field="cwd"' in content
    assert context["preview"] is None
    assert len(context["diagnostics"]) >= 1
    assert 'data-cwd-valid="false"' in content


def test_preview_explains_bad_conversation_id(author_web: Client, workdir: Path) -> None:
    _, content, context = preview(
        author_web, template="[prompt:conversation_id]", cwd=str(workdir), conversation_id="a b"
    )

    assert "not a valid conversation id" in context["errors"]["conversation_id"]


def test_preview_passes_model_and_conversation(author_web: Client, workdir: Path) -> None:
    _, _, context = preview(
        author_web,
        template="[prompt:model] [prompt:conversation_id]",
        cwd=str(workdir),
        model="m-1",
        conversation_id="c.1",
    )

    assert context["prompt"] == "m-1 c.1"


def test_preview_refuses_template_over_limit(
    author_web: Client, workdir: Path, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "MAX_TEMPLATE_BYTES": 100}

    status, content, _ = preview(author_web, template="x" * 101, cwd=str(workdir))

    assert status == 200
    assert "101 bytes" in content and "100" in content


# --- save ----------------------------------------------------------------------------


def save(client: Client, template: str, base_etag: str = "") -> tuple[int, str, dict[str, str]]:
    response = client.post(
        "/editor/save", {"template": template, "base_etag": base_etag}, HTTP_HX_REQUEST="true"
    )
    return response.status_code, response.content.decode(), dict(response.headers)


def test_save_stores_new_version_and_tells_the_page(author_web: Client, author: User) -> None:
    etag = selectors.template_current().etag

    status, content, headers = save(author_web, "one\r\ntwo\n", etag)

    assert status == 200
    version = TemplateVersion.objects.get()
    assert (version.number, version.text, version.author) == (1, "one\r\ntwo\n", author)
    assert "Saved as version 1" in content
    trigger = json.loads(headers["HX-Trigger"])["sysprompt:saved"]
    assert trigger == {
        "version": 1,
        "etag": selectors.template_current().etag,
        "author": "author",
    }


def test_save_without_base_etag_wins(author_web: Client) -> None:
    services.template_save(text="theirs")

    status, _, _ = save(author_web, "mine")

    assert status == 200
    assert selectors.template_current().text == "mine"


def test_save_with_stale_etag_answers_conflict_and_keeps_theirs(author_web: Client) -> None:
    stale = selectors.template_current().etag
    services.template_save(text="shared line\ntheir line\n")

    status, content, headers = save(author_web, "shared line\nmy line\n", stale)

    assert status == 412
    assert TemplateVersion.objects.count() == 1
    assert selectors.template_current().text == "shared line\ntheir line\n"
    assert headers["HX-Retarget"] == "#conflict-body"
    assert headers["HX-Reswap"] == "innerHTML"
    assert headers["X-Sysprompt-Partial"] == "1"
    assert json.loads(headers["HX-Trigger"])["sysprompt:conflict"]["version"] == 1
    assert "Someone else saved first" in content
    assert '<tr class="diff-delete">' in content and "their line" in content
    assert '<tr class="diff-insert">' in content and "my line" in content
    assert 'id="conflict-theirs"' in content


def test_save_refused_without_permission(viewer_web: Client) -> None:
    status, content, headers = save(viewer_web, "mine")

    assert status == 403
    assert TemplateVersion.objects.count() == 0
    assert "Prompt authors" in content
    assert headers["X-Sysprompt-Partial"] == "1"


def test_save_refused_over_limit(author_web: Client, settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 10}

    status, content, _ = save(author_web, "é" * 6)

    assert status == 413
    assert TemplateVersion.objects.count() == 0
    assert "12 bytes" in content


def test_save_escapes_problem_and_conflict_text(author_web: Client) -> None:
    stale = selectors.template_current().etag
    services.template_save(text=SCRIPT)

    _, content, _ = save(author_web, f"{SCRIPT}!", stale)

    assert SCRIPT not in content.split('id="conflict-theirs"')[0]


# --- history -------------------------------------------------------------------------


def test_history_lists_versions_newest_first_in_pages(author_web: Client, author: User) -> None:
    for n in range(30):
        services.template_save(text=f"v{n + 1}", author=author)

    first = author_web.get("/editor/history", HTTP_HX_REQUEST="true")
    numbers = [v.number for v in first.context["versions"]]

    assert numbers == list(range(30, 5, -1))
    assert first.context["next_before"] == 6
    assert 'id="history-items"' in first.content.decode()
    rest = author_web.get("/editor/history?before=6", HTTP_HX_REQUEST="true")
    assert [v.number for v in rest.context["versions"]] == [5, 4, 3, 2, 1]
    assert rest.context["next_before"] is None
    assert 'id="history-items"' not in rest.content.decode()  # rows only, appended


def test_history_shows_author_and_time_of_each_version(author_web: Client, author: User) -> None:
    services.template_save(text="by nobody")
    saved = services.template_save(text="by the author", author=author)

    content = author_web.get("/editor/history", HTTP_HX_REQUEST="true").content.decode()

    second, first = content.split('class="history-item"')[1:]
    assert "<strong>v2</strong>" in second and "author" in second and "current" in second
    assert f'datetime="{saved.created_at.isoformat()}"' in second
    assert "<strong>v1</strong>" in first and "unknown" in first and "current" not in first


def test_history_says_default_when_empty(author_web: Client) -> None:
    response = author_web.get("/editor/history")

    assert "built-in default" in response.content.decode()


def test_version_text_answers_json(author_web: Client) -> None:
    services.template_save(text="one\r\n")

    response = author_web.get("/editor/history/1.json")

    assert response.json() == {
        "version": 1,
        "template": "one\r\n",
        "settings": {"compress": False},
    }


def test_version_text_unknown_is_404(author_web: Client) -> None:
    assert author_web.get("/editor/history/7.json").status_code == 404
    assert author_web.post("/editor/history/7/diff", {"template": ""}).status_code == 404


def test_version_diff_compares_with_editor_text(author_web: Client) -> None:
    services.template_save(text="a\nold\nc\n")

    response = author_web.post("/editor/history/1/diff", {"template": "a\nnew\nc\n"})

    content = response.content.decode()
    assert response.status_code == 200
    assert "Version 1 → the editor" in content
    assert response.context["diff"].added == 1 and response.context["diff"].removed == 1


# --- file suggestions ------------------------------------------------------------------


def files(client: Client, cwd: Path | str, q: str = "") -> tuple[int, dict[str, object]]:
    response = client.get("/editor/files", {"cwd": str(cwd), "q": q})
    return response.status_code, response.json()


def test_files_suggests_names_under_cwd(author_web: Client, workdir: Path) -> None:
    (workdir / "docs").mkdir()
    (workdir / "docs" / "guide.md").write_text("x")
    (workdir / ".git").mkdir()
    (workdir / ".git" / "HEAD").write_text("x")

    status, body = files(author_web, workdir)

    assert status == 200
    assert body == {"files": ["AGENTS.md", "docs/guide.md"]}


def test_files_filters_by_query_prefix_first(author_web: Client, workdir: Path) -> None:
    (workdir / "docs").mkdir()
    (workdir / "docs" / "agents-notes.md").write_text("x")

    _, body = files(author_web, workdir, "AGENTS")

    assert body == {"files": ["AGENTS.md", "docs/agents-notes.md"]}


def test_files_skips_symlinks_leaving_the_roots(
    author_web: Client, workdir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, workdir / "leak.txt")
    os.symlink(workdir / "AGENTS.md", workdir / "alias.md")

    _, body = files(author_web, workdir)

    assert body == {"files": ["AGENTS.md", "alias.md"]}


@pytest.mark.parametrize("cwd", ["/", "relative", "/definitely/missing"])
def test_files_refuses_cwd_outside_roots(author_web: Client, allowed_root: Path, cwd: str) -> None:
    status, body = files(author_web, cwd)

    assert status == 400
    assert body["files"] == []
    assert isinstance(body["error"], str) and body["error"]


# --- conversations ---------------------------------------------------------------------


def resolve(workdir: Path, conversation_id: str, model: str = "") -> ConversationPrompt:
    """A first turn, as an agent host (``host``) makes it."""
    host, _ = User.objects.get_or_create(username="host")
    return services.conversation_prompt_resolve(
        conversation_id=conversation_id, cwd=str(workdir), model=model, user=host
    ).prompt


def test_conversations_list_newest_first_and_pages(authors_web: Client, workdir: Path) -> None:
    for n in range(55):
        resolve(workdir, f"conv-{n:02d}")

    response = authors_web.get("/conversations/")

    ids = [p.conversation_id for p in response.context["prompts"]]
    assert ids == [f"conv-{n:02d}" for n in range(54, 4, -1)]
    assert response["Vary"].count("HX-Request") == 1
    more = authors_web.get(
        f"/conversations/?before={response.context['next_before']}", HTTP_HX_REQUEST="true"
    )
    assert [p.conversation_id for p in more.context["prompts"]] == [
        f"conv-{n:02d}" for n in range(4, -1, -1)
    ]
    assert [t.name for t in more.templates][0] == "editor/_conversation_rows.html"


def test_conversations_search_by_part_of_id(authors_web: Client, workdir: Path) -> None:
    for conversation_id in ("alpha-1", "beta-2", "ALPHA-3"):
        resolve(workdir, conversation_id)

    response = authors_web.get("/conversations/?q=alpha", HTTP_HX_REQUEST="true")

    assert [p.conversation_id for p in response.context["prompts"]] == ["ALPHA-3", "alpha-1"]
    empty = authors_web.get("/conversations/?q=zzz").content.decode()
    assert "No conversation id contains “zzz”" in empty


def test_conversation_page_shows_what_compaction_would_change(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text="Hello.\nOld line.\n[prompt:model]")
    resolve(workdir, "c1", model="m")
    services.template_save(text="Hello.\nNew line.\n[prompt:model]")

    page = authors_web.get("/conversations/c1/").content.decode()
    response = authors_web.post("/conversations/c1/compaction", HTTP_HX_REQUEST="true")

    assert "Old line." in page and "New line." not in page  # GET renders nothing afresh
    content = response.content.decode()
    assert response.status_code == 200
    assert "Old line." in content and "New line." in content
    preview = response.context["preview"]
    assert preview.problem is None
    assert (preview.diff.added, preview.diff.removed) == (1, 1)
    assert preview.fresh.prompt == "Hello.\nNew line.\nm"
    stored = ConversationPrompt.objects.get()
    assert stored.sha256 is not None and stored.sha256 in page
    assert stored.system_prompt == "Hello.\nOld line.\nm"  # looking changed nothing


def test_conversation_page_says_nothing_changes_when_same(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text="Stable.")
    resolve(workdir, "c1")

    content = authors_web.post("/conversations/c1/compaction").content.decode()

    assert "Nothing: a fresh render gives the same prompt" in content


def test_conversation_page_explains_cwd_gone(authors_web: Client, workdir: Path) -> None:
    services.template_save(text="[prompt:cwd]")
    resolve(workdir, "c1")
    os.rename(workdir, workdir.with_name("moved"))

    response = authors_web.post("/conversations/c1/compaction", HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "Cannot render afresh" in response.content.decode()
    problem = response.context["preview"].problem
    assert problem is not None and "is not an existing directory" in problem


@pytest.mark.parametrize("conversation_id", ["unknown", "bad id", "x" * 201])
def test_conversation_page_unknown_is_404(authors_web: Client, conversation_id: str) -> None:
    assert authors_web.get(f"/conversations/{conversation_id}/").status_code == 404
    assert authors_web.post(f"/conversations/{conversation_id}/compaction").status_code == 404


def test_conversation_reconstruct_replaces_stored_prompt(
    authors_web: Client, workdir: Path
) -> None:
    services.template_save(text="first")
    resolve(workdir, "c1")
    services.template_save(text="second")

    response = authors_web.post("/conversations/c1/construct", follow=True)

    stored = ConversationPrompt.objects.get()
    assert (stored.system_prompt, stored.template_version_id) == ("second", 2)
    assert (
        "Re-constructed from what production serves now: the working copy (latest)."
        in response.content.decode()
    )


def test_conversation_reconstruct_explains_cwd_gone(authors_web: Client, workdir: Path) -> None:
    services.template_save(text="first")
    resolve(workdir, "c1")
    services.template_save(text="second")
    os.rename(workdir, workdir.with_name("moved"))

    response = authors_web.post("/conversations/c1/construct", follow=True)

    assert ConversationPrompt.objects.get().system_prompt == "first"
    assert "Not re-constructed" in response.content.decode()


def test_conversation_forget_deletes_and_returns_to_list(
    authors_web: Client, workdir: Path
) -> None:
    resolve(workdir, "c1")
    resolve(workdir, "c2")

    response = authors_web.post("/conversations/c1/forget", follow=True)

    assert list(ConversationPrompt.objects.values_list("conversation_id", flat=True)) == ["c2"]
    assert response.redirect_chain[-1][0] == "/conversations/"
    assert "Forgot the prompt of c1." in response.content.decode()


@pytest.mark.parametrize("action", ["construct", "forget", "compaction"])
def test_conversation_actions_refuse_get(authors_web: Client, workdir: Path, action: str) -> None:
    resolve(workdir, "c1")

    assert authors_web.get(f"/conversations/c1/{action}").status_code == 405
    assert ConversationPrompt.objects.count() == 1


def test_conversation_pages_escape_prompt(authors_web: Client, workdir: Path) -> None:
    services.template_save(text=SCRIPT)
    resolve(workdir, "c1")
    services.template_save(text=f"{SCRIPT}2")

    detail = authors_web.get("/conversations/c1/").content.decode()
    compaction = authors_web.post("/conversations/c1/compaction").content.decode()

    assert SCRIPT not in detail and SCRIPT not in compaction
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail
    assert "&lt;script&gt;alert(1)&lt;/script&gt;2" in compaction


def test_main_page_counts_conversations_up_to_a_cap(
    authors_web: Client, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        resolve(workdir, f"c{n}")
    assert "3 conversations stored" in authors_web.get("/").content.decode()

    monkeypatch.setattr("sysprompt.editor.views.COUNT_CAP", 2)

    assert "More than 2 conversations stored" in authors_web.get("/").content.decode()


def test_preview_keeps_leading_newline_of_prompt(authors_web: Client, workdir: Path) -> None:
    _, content, _ = preview(authors_web, template="\n\nAfter two blank lines.", cwd=str(workdir))

    # The HTML parser drops one newline right after <pre>: the template adds its own.
    assert 'aria-label="The rendered system prompt">\n\n\nAfter two blank lines.</pre>' in content
