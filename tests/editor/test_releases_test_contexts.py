"""Test contexts on the Releases page: create, edit, delete; refusals show under the
field they name and store nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.events.models import AuditRecord
from sysprompt.releases import selectors, services
from tests.editor.releases_support import SCRIPT, production  # noqa: F401  (the fixture)


def form(workdir: Path, **fields: str) -> dict[str, str]:
    data = {
        "name": "shell-user",
        "cwd": str(workdir),
        "values": "git:branch=main",
        "provider": "anthropic",
        "model": "claude",
        "tools": "shell, edit",
        "variables": "project=demo",
        "override": "Be terse.",
    }
    return {**data, **fields}


def test_test_context_create_stores_every_field(author_web: Client, workdir: Path) -> None:
    response = author_web.post("/releases/test-contexts/", form(workdir))

    assert response.status_code == 302
    assert response["Location"] == "/releases/#test-contexts"
    row = selectors.test_context_get("shell-user")
    assert (row.cwd, row.provider, row.model) == (str(workdir), "anthropic", "claude")
    assert row.values == {"git:branch": "main"}
    assert row.tools == ["shell", "edit"]
    assert row.variables == {"project": "demo"}
    assert row.override == "Be terse."
    page = author_web.get("/releases/").content.decode()
    assert '<tr data-test-context="shell-user">' in page


def test_test_context_edit_replaces_fields(author_web: Client, author: User, workdir: Path) -> None:
    services.test_context_save(
        name="shell-user", fields={"cwd": str(workdir), "tools": ["shell"]}, author=author
    )
    page = author_web.get("/releases/test-contexts/shell-user/").content.decode()
    assert 'value="shell"' in page and "readonly" in page

    response = author_web.post(
        "/releases/test-contexts/shell-user/",
        form(
            workdir,
            name="renamed",
            tools="",
            override='{"content": "Extra.", "strategy": "prepend"}',
        ),
    )

    assert response.status_code == 302
    row = selectors.test_context_get("shell-user")
    assert row.tools == [] and row.override == {"content": "Extra.", "strategy": "prepend"}
    assert [tc.name for tc in selectors.test_contexts_list()] == ["shell-user"]


@pytest.mark.parametrize(
    ("fields", "error_id"),
    [
        ({"cwd": "relative/path"}, "tc-cwd-error"),
        ({"name": "Bad Name"}, "tc-name-error"),
        ({"variables": "no equals sign"}, "tc-variables-error"),
        ({"override": "{not json"}, "tc-override-error"),
        ({"values": "nonsense=1"}, "tc-values-error"),
    ],
)
def test_test_context_bad_input_shows_under_the_field_and_stores_nothing(
    author_web: Client, workdir: Path, fields: dict[str, str], error_id: str
) -> None:
    response = author_web.post("/releases/test-contexts/", form(workdir, **fields))

    assert response.status_code == 400
    html = response.content.decode()
    assert f'id="{error_id}"' in html
    assert not selectors.test_contexts_list().exists()


def test_test_context_create_existing_name_is_refused(
    author_web: Client, author: User, workdir: Path
) -> None:
    services.test_context_save(name="shell-user", fields={"cwd": str(workdir)}, author=author)
    response = author_web.post("/releases/test-contexts/", form(workdir, model="other"))
    assert response.status_code == 400
    assert 'id="tc-name-error"' in response.content.decode()
    assert selectors.test_context_get("shell-user").model == ""


def test_test_context_delete(author_web: Client, author: User, workdir: Path) -> None:
    services.test_context_save(name="shell-user", fields={"cwd": str(workdir)}, author=author)

    response = author_web.post("/releases/test-contexts/shell-user/delete")

    assert response.status_code == 302
    assert not selectors.test_contexts_list().exists()
    deleted = AuditRecord.objects.get(action="test_context.deleted")
    assert deleted.actor == author.username
    assert author_web.post("/releases/test-contexts/shell-user/delete").status_code == 404


def test_test_context_pages_escape_and_refuse_agent_hosts(
    author_web: Client, agent_host: User, author: User, workdir: Path
) -> None:
    services.test_context_save(
        name="x", fields={"cwd": str(workdir), "variables": {"v": SCRIPT}}, author=author
    )
    html = author_web.get("/releases/test-contexts/x/").content.decode()
    assert SCRIPT not in html and "v=&lt;script&gt;" in html

    host = Client()
    host.force_login(agent_host)
    assert host.get("/releases/test-contexts/x/").status_code == 403
    assert host.post("/releases/test-contexts/x/delete").status_code == 403
    assert selectors.test_contexts_list().count() == 1


def test_test_context_create_without_a_cwd_keeps_its_values(
    author_web: Client, workdir: Path
) -> None:
    response = author_web.post("/releases/test-contexts/", form(workdir, cwd=""))
    refused = author_web.post(
        "/releases/test-contexts/", form(workdir, name="none", cwd="", values="")
    )

    assert response.status_code == 302
    row = selectors.test_context_get("shell-user")
    assert (row.cwd, row.values) == ("", {"git:branch": "main"})
    assert refused.status_code == 400 and 'id="tc-cwd-error"' in refused.content.decode()
    page = author_web.get("/releases/").content.decode()
    assert "— (values only)" in page
