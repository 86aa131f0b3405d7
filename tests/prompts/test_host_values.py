"""Host-local values (agent-hosts.md §0): supplied by the agent host, used as they are;
and ``SERVER_RESOLVES``, what the server may still resolve on its own machine.

Real files, real repositories, the real API and database; what the server opens is
observed with an audit hook (every ``open`` of this process while a call runs).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from config import settings as project_settings
from sysprompt.conf import DEFAULT_SERVER_RESOLVES, app_settings
from sysprompt.errors import InvalidInput
from sysprompt.prompts import rendering, services
from sysprompt.prompts.files import files_suggest
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.prompts.selectors import CurrentTemplate
from sysprompt.prompts.validation import CheckedCwd, cwd_check, host_context_check
from sysprompt_core.limits import HOST_VALUES_MAX_COUNT

pytestmark = pytest.mark.django_db

CONVERSATION = "/api/conversations/{}/system-prompt"
TEMPLATE = "/api/system-prompt"

# --- what the server opens (an audit hook of this module's own, recording only while a
# list is set in the current context: hooks cannot be removed) --------------------------

_OPENED: ContextVar[list[str] | None] = ContextVar("test_host_values_opened", default=None)


def _audit(event: str, args: tuple[object, ...]) -> None:
    log = _OPENED.get()
    if log is None or not args:
        return
    if event in {"open", "os.listdir", "os.scandir", "os.chdir"} and isinstance(
        args[0], str | bytes | os.PathLike
    ):
        log.append(os.path.abspath(os.fsdecode(args[0])))
    elif event == "subprocess.Popen":
        log.append(repr(args))


sys.addaudithook(_audit)


class Opened:
    """``with Opened() as paths:`` every path this thread opened, listed or ran in."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __enter__(self) -> list[str]:
        self._token = _OPENED.set(self.paths)
        return self.paths

    def __exit__(self, *exc: object) -> None:
        _OPENED.reset(self._token)


def under(paths: list[str], folder: Path) -> list[str]:
    return [path for path in paths if str(folder) in path or str(folder.resolve()) in path]


# --- helpers ---------------------------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


def repo_on_branch(path: Path, branch: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "AGENTS.md").write_text(f"Rules of {path.name}.\n")
    git(path, "init", "--quiet", f"--initial-branch={branch}")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def set_template(author_client: APIClient, text: str) -> None:
    response = author_client.put(TEMPLATE, {"template": text}, format="json")
    assert response.status_code == 200, response.content


def call(
    client: APIClient, action: str, cwd: Path | str, conversation_id: str = "c1", **body: Any
) -> Any:
    return client.post(
        CONVERSATION.format(conversation_id) + f"/{action}",
        {"cwd": str(cwd), **body},
        format="json",
    )


def preview(client: APIClient, cwd: Path | str, template: str, **body: Any) -> Any:
    return client.post(
        "/api/system-prompt/preview",
        {"cwd": str(cwd), "template": template, **body},
        format="json",
    )


def resolving(settings: Settings, *types: str, **more: Any) -> None:
    """SERVER_RESOLVES set to ``types``, the other SYSPROMPT settings kept."""
    settings.SYSPROMPT = {**settings.SYSPROMPT, "SERVER_RESOLVES": list(types), **more}


# --- a supplied value is used as it is ---------------------------------------------------


def test_supplied_file_is_used_and_the_servers_copy_is_never_opened(
    agent_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, "Rules: [file:AGENTS.md]\n")
    agents = workdir / "AGENTS.md"
    assert os.access(agents, os.R_OK)  # the server could read it

    with Opened() as opened:
        response = call(agent_client, "resolve", workdir, values={"file:AGENTS.md": "the host's"})

    assert response.status_code == 201, response.content
    assert response.json()["system_prompt"] == "Rules: the host's\n"
    assert under(opened, agents) == []
    assert opened, "the audit hook saw nothing at all: it is not watching"


def test_supplied_git_values_are_used_instead_of_the_repository(
    agent_client: APIClient, author_client: APIClient, allowed_root: Path
) -> None:
    repo = repo_on_branch(allowed_root / "repo", "main")
    set_template(author_client, "On [git:branch].\n[git:status]\n")

    response = call(
        agent_client,
        "resolve",
        repo,
        values={"git:branch": "feature/from-host", "git:status": " M host.py"},
    )

    assert response.json()["system_prompt"] == "On feature/from-host.\n M host.py\n"


def test_supplied_null_means_the_value_does_not_exist(
    agent_client: APIClient, workdir: Path
) -> None:
    template = "[if file:AGENTS.md]rules: [file:AGENTS.md][else]no rules[endif]"

    supplied = preview(agent_client, workdir, template, values={"file:AGENTS.md": None})
    resolved = preview(agent_client, workdir, template)

    assert supplied.json()["system_prompt"] == "no rules"
    assert supplied.json()["variables"]["file:AGENTS.md"] is None
    assert supplied.json()["reasons"]["file:AGENTS.md"]
    assert resolved.json()["system_prompt"] == "rules: Run the tests before you commit."


def test_supplied_values_are_kept_byte_for_byte(agent_client: APIClient, workdir: Path) -> None:
    value = "  line one\r\nline two\n\n"

    response = preview(agent_client, workdir, "<[file:notes.md]>", values={"file:notes.md": value})

    assert response.json()["system_prompt"] == f"<{value}>"


def test_supplied_cwd_is_what_prompt_cwd_shows(agent_client: APIClient, workdir: Path) -> None:
    response = call(agent_client, "resolve", workdir, values={"prompt:cwd": "/home/ada/project"})

    assert response.json()["system_prompt"].endswith(
        "The current working directory is /home/ada/project.\n"
    )
    assert ConversationPrompt.objects.get().cwd == str(workdir)  # the request's cwd is stored


def test_values_are_this_requests_only_never_stored(
    agent_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, "[file:AGENTS.md]")
    first = call(agent_client, "resolve", workdir, values={"file:AGENTS.md": "supplied"})
    later = call(agent_client, "resolve", workdir, values={"file:AGENTS.md": "ignored"})
    rebuilt = call(agent_client, "construct", workdir)

    assert first.json()["system_prompt"] == later.json()["system_prompt"] == "supplied"
    assert "values" not in first.json()
    assert rebuilt.json()["system_prompt"] == "Run the tests before you commit."


def test_values_reach_construct_compact_and_the_library_preview(
    agent_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    set_template(author_client, "[system:hostname]")
    values = {"system:hostname": "host-machine"}

    built = call(agent_client, "construct", workdir, values=values)
    compacted = call(agent_client, "compact", workdir, values=values)
    library = agent_client.post(
        "/api/library/preview",
        {"cwd": str(workdir), "template": "[system:hostname]", "values": values},
        format="json",
    )

    assert built.json()["system_prompt"] == "host-machine"
    assert compacted.json()["persisted_system_prompt"] == "host-machine"
    assert library.json()["system_prompt"] == "host-machine"


# --- refused values: 400 naming the field, nothing stored -------------------------------


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"var:team": "x"}, "values.var:team"),
        ({"prompt:model": "x"}, "values.prompt:model"),
        ({"prompt:conversation_id": "x"}, "values.prompt:conversation_id"),
        ({"tool:shell": "x"}, "values.tool:shell"),
        ({"fragment:core": "x"}, "values.fragment:core"),
        ({"AGENTS.md": "x"}, "values.AGENTS.md"),
        ({"file:a]b": "x"}, "values.file:a]b"),
        ({"file:AGENTS.md": 3}, "values.file:AGENTS.md"),
        ({"file:AGENTS.md": ["x"]}, "values.file:AGENTS.md"),
        (["file:AGENTS.md"], "values"),
        ("file:AGENTS.md", "values"),
    ],
)
def test_values_refused_with_400_naming_the_field(
    agent_client: APIClient, workdir: Path, values: object, field: str
) -> None:
    response = call(agent_client, "resolve", workdir, values=values)

    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not ConversationPrompt.objects.exists()


def test_a_value_over_max_file_bytes_is_refused_naming_its_key(
    agent_client: APIClient, workdir: Path, settings: Settings
) -> None:
    resolving(settings, *DEFAULT_SERVER_RESOLVES, MAX_FILE_BYTES=100)

    at_limit = call(agent_client, "resolve", workdir, "a", values={"file:AGENTS.md": "é" * 50})
    over = call(agent_client, "resolve", workdir, "b", values={"file:AGENTS.md": "é" * 50 + "x"})

    assert at_limit.status_code == 201
    assert over.status_code == 400
    [message] = over.json()["values.file:AGENTS.md"]
    assert "101 bytes" in message and "100" in message


def test_values_over_max_read_bytes_together_are_refused(
    agent_client: APIClient, workdir: Path, settings: Settings
) -> None:
    resolving(settings, *DEFAULT_SERVER_RESOLVES, MAX_FILE_BYTES=100, MAX_READ_BYTES=150)
    values = {"file:a.md": "x" * 100, "file:b.md": "y" * 51}

    response = call(agent_client, "resolve", workdir, values=values)

    assert response.status_code == 400
    assert "150" in response.json()["values"][0]


def test_more_values_than_allowed_are_refused(agent_client: APIClient, workdir: Path) -> None:
    values = {f"file:f{index}.md": None for index in range(HOST_VALUES_MAX_COUNT + 1)}

    response = call(agent_client, "resolve", workdir, values=values)

    assert response.status_code == 400
    assert f"{HOST_VALUES_MAX_COUNT:,}" in response.json()["values"][0]


@pytest.mark.parametrize("value", ["a\0b", "\ud800"])
def test_values_with_nul_or_lone_surrogates_are_refused(
    agent_client: APIClient, workdir: Path, value: str
) -> None:
    body = {"cwd": str(workdir), "values": {"file:AGENTS.md": value}}
    response = agent_client.post(
        CONVERSATION.format("c1") + "/resolve",
        json.dumps(body),  # ASCII, a lone surrogate as its \ud800 escape
        content_type="application/json",
    )

    assert response.status_code == 400
    assert any(field.startswith("values") for field in response.json())


def test_host_context_check_names_the_key(settings: Settings) -> None:
    with pytest.raises(InvalidInput) as refused:
        host_context_check(values={"git:branch": "main", "var:x": "y"})

    assert refused.value.field == "values.var:x"
    assert host_context_check(values={"git:branch": None}).values == {"git:branch": None}


# --- SERVER_RESOLVES: the setting --------------------------------------------------------


def test_server_resolves_defaults_to_every_host_local_type(settings: Settings) -> None:
    settings.SYSPROMPT = {}

    assert app_settings().server_resolves == {"prompt", "git", "file", "system"}
    assert app_settings().server_resolves == DEFAULT_SERVER_RESOLVES


@pytest.mark.parametrize(
    "value", [["git", "network"], "git", ["GIT"], [None], {"git": True}, ["var"]]
)
def test_server_resolves_refuses_what_is_not_a_list_of_host_local_types(
    settings: Settings, value: object
) -> None:
    settings.SYSPROMPT = {"SERVER_RESOLVES": value}

    with pytest.raises(ImproperlyConfigured, match="SERVER_RESOLVES"):
        app_settings()


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [("system", ["system"]), (" git , file ", ["git", "file"]), ("", []), (",", [])],
)
def test_server_resolves_from_the_environment_as_a_comma_list(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, raw: str, parsed: list[str]
) -> None:
    monkeypatch.setenv("SYSPROMPT_SERVER_RESOLVES", raw)

    from_env = project_settings._sysprompt()
    settings.SYSPROMPT = from_env

    assert from_env["SERVER_RESOLVES"] == parsed
    assert app_settings().server_resolves == frozenset(parsed)


def test_server_resolves_left_unset_in_the_environment_is_not_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SYSPROMPT_SERVER_RESOLVES", raising=False)

    assert "SERVER_RESOLVES" not in project_settings._sysprompt()


# --- a central deployment: the cwd is only a value ----------------------------------------


@pytest.mark.parametrize("types", [[], ["system"], ["prompt", "system"]])
def test_central_cwd_is_only_a_value_nothing_is_opened_or_checked(
    settings: Settings, tmp_path: Path, types: list[str]
) -> None:
    resolving(settings, *types)
    elsewhere = tmp_path / "not-in-any-root" / "." / "project" / ""

    with Opened() as opened:
        checked = cwd_check(str(elsewhere))

    assert checked == str(tmp_path / "not-in-any-root" / "project")
    assert checked.real is None and not checked.on_disk
    assert under(opened, tmp_path) == []


def test_central_still_refuses_a_relative_cwd(settings: Settings) -> None:
    resolving(settings)

    with pytest.raises(InvalidInput) as refused:
        cwd_check("project")

    assert refused.value.field == "cwd"


@pytest.mark.parametrize("types", [["git"], ["file"], ["git", "file", "system"]])
def test_cwd_is_checked_on_disk_when_the_server_reads_git_or_files(
    settings: Settings, tmp_path: Path, allowed_root: Path, types: list[str]
) -> None:
    resolving(settings, *types)
    (tmp_path / "outside").mkdir()

    inside = cwd_check(str(allowed_root))
    with pytest.raises(InvalidInput, match="outside the allowed roots"):
        cwd_check(str(tmp_path / "outside"))

    assert inside.real == str(allowed_root.resolve())


def test_a_cwd_checked_as_only_a_value_is_never_resolved_in(
    settings: Settings, workdir: Path
) -> None:
    resolving(settings)
    checked = cwd_check(str(workdir))
    resolving(settings, *DEFAULT_SERVER_RESOLVES)  # the setting changes after the check
    template = CurrentTemplate("[file:AGENTS.md]|[git:branch]|", 0, None, None)

    with Opened() as opened:
        rendered = rendering.prompt_render(cwd=checked, template=template)

    assert rendered.prompt == "||"
    assert under(opened, workdir) == []


def test_checked_cwd_pickles_with_or_without_its_real_path() -> None:
    for checked in (CheckedCwd("/a", "/real/a"), CheckedCwd("/b", None)):
        again = pickle.loads(pickle.dumps(checked))
        assert (again, again.real) == (checked, checked.real)


def test_central_without_values_git_and_files_do_not_exist_and_nothing_is_read(
    agent_client: APIClient, author_client: APIClient, settings: Settings, tmp_path: Path
) -> None:
    host = repo_on_branch(tmp_path / "host", "feature/x")  # readable, but not the server's
    set_template(author_client, "Branch: [git:branch]. Rules: [file:AGENTS.md]. [prompt:cwd]")
    resolving(settings)

    with Opened() as opened:
        response = call(agent_client, "resolve", host)
        shown = preview(agent_client, host, "[git:branch][file:AGENTS.md]")

    assert response.status_code == 201, response.content
    assert response.json()["system_prompt"] == f"Branch: . Rules: . {host}"
    reasons = shown.json()["reasons"]
    assert "SERVER_RESOLVES" in reasons["git:branch"]
    assert "SERVER_RESOLVES" in reasons["file:AGENTS.md"]
    assert under(opened, host) == []


def test_central_with_values_the_host_gets_its_own_prompt(
    agent_client: APIClient, author_client: APIClient, settings: Settings
) -> None:
    set_template(author_client, "[system:os] / [prompt:cwd] on [git:branch]\n[file:AGENTS.md]\n")
    resolving(settings, "system")
    values = {"git:branch": "feature/y", "file:AGENTS.md": "Host rules."}

    first = call(agent_client, "resolve", "/home/ada/project", values=values)
    later = call(agent_client, "resolve", "/home/ada/project")

    text = first.json()["system_prompt"]
    assert first.status_code == 201 and later.status_code == 200
    assert text.endswith(" / /home/ada/project on feature/y\nHost rules.\n")
    assert not text.startswith(" /")  # system:os is still the server's to resolve
    assert later.json()["system_prompt"] == text


def test_central_system_values_follow_the_setting(
    agent_client: APIClient, workdir: Path, settings: Settings
) -> None:
    resolving(settings)
    unresolved = preview(agent_client, workdir, "[system:os]|[system:hostname]")
    resolving(settings, "system")
    resolved = preview(agent_client, workdir, "[system:os]|[system:hostname]")

    assert unresolved.json()["system_prompt"] == "|"
    assert resolved.json()["system_prompt"] != "|"


def test_central_services_accept_any_absolute_cwd_on_every_turn(
    agent_host: Any, settings: Settings
) -> None:
    resolving(settings)

    first = services.conversation_prompt_resolve(
        conversation_id="c", cwd="/nowhere/at/all", user=agent_host
    )
    later = services.conversation_prompt_resolve(
        conversation_id="c", cwd="/another/one", user=agent_host
    )

    assert first.created and not later.created
    assert first.prompt.cwd == "/nowhere/at/all"
    assert "/nowhere/at/all" in (first.prompt.system_prompt or "")


def test_central_editor_suggests_no_files(settings: Settings, workdir: Path) -> None:
    assert files_suggest(cwd=str(workdir)) == ["AGENTS.md"]

    resolving(settings)

    assert files_suggest(cwd=str(workdir)) == []


def test_central_editor_preview_renders_without_a_directory(
    author_web_client: Client, settings: Settings
) -> None:
    resolving(settings)

    response = author_web_client.post(
        "/editor/preview",
        {"template": "In [prompt:cwd] on [git:branch].", "cwd": "/home/ada/project"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    assert response.context["prompt"] == "In /home/ada/project on ."


@pytest.fixture
def author_web_client(author: Any) -> Client:
    client = Client()
    client.force_login(author)
    return client
