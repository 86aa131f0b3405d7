"""The REST API over HTTP semantics (DRF's test client, real database, real files, git)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from sysprompt.api.serializers import ConversationPromptOutputSerializer
from sysprompt.api.views import prompt_payload
from sysprompt.conf import DEFAULT_COMPACTION_INSTRUCTIONS, DEFAULT_TEMPLATE
from sysprompt.prompts import selectors
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt, TemplateVersion
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

TEMPLATE = "/api/system-prompt"
CONVERSATION = "/api/conversations/{}/system-prompt"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


def make_repo(path: Path) -> Path:
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def turn(
    client: APIClient, action: str, workdir: Path, conversation_id: str = "c1", **body: Any
) -> Any:
    return client.post(
        CONVERSATION.format(conversation_id) + f"/{action}",
        {"cwd": str(workdir), **body},
        format="json",
    )


def put_template(client: APIClient, text: object, **headers: str) -> Any:
    return client.put(TEMPLATE, {"template": text}, format="json", headers=headers)


# --- the cache promise --------------------------------------------------------------


def test_resolve_1000_turns_same_bytes_until_compact(
    author_client: APIClient, agent_client: APIClient, workdir: Path, allowed_root: Path
) -> None:
    make_repo(workdir)
    put_template(
        author_client,
        "[system:time] [git:branch] [file:AGENTS.md] [prompt:model] [prompt:cwd] [git:status]",
    )
    other = allowed_root / "other"
    other.mkdir()
    first = turn(agent_client, "resolve", workdir, model="m-1")
    assert first.status_code == 201
    frozen = first.json()
    assert frozen["system_prompt"].split()[1] == "main"
    changes: dict[int, Callable[[], object]] = {
        100: lambda: put_template(author_client, "edited [system:time]"),
        200: lambda: (workdir / "AGENTS.md").write_text("changed\n"),
        300: lambda: git(workdir, "checkout", "--quiet", "-b", "feature"),
        400: lambda: (workdir / "new.txt").write_text("untracked\n"),
    }

    answers = set()
    for number in range(1, 1000):
        if number in changes:
            changes[number]()
        cwd, model = (other, "m-2") if number % 2 else (workdir, "m-1")
        response = turn(agent_client, "resolve", cwd, model=model)
        assert response.status_code == 200
        answer = response.json()
        # The frozen prompt whatever the turn says; the answer says what differs.
        assert answer.pop("context_mismatch", []) == (["cwd", "model"] if number % 2 else [])
        answers.add(json.dumps(answer, sort_keys=True))

    assert answers == {json.dumps(frozen, sort_keys=True)}
    compacted = turn(agent_client, "compact", workdir, model="m-3")
    assert compacted.status_code == 200
    fresh = compacted.json()["persisted_system_prompt"]
    assert fresh.startswith("edited ")
    assert fresh != frozen["system_prompt"]
    assert compacted.json()["system_prompt"] == fresh + "\n\n" + DEFAULT_COMPACTION_INSTRUCTIONS
    stable = {turn(agent_client, "resolve", other).json()["sha256"] for _ in range(50)}
    assert stable == {sha256(fresh)}
    assert ConversationPrompt.objects.get().system_prompt == fresh


def test_resolve_later_turn_reads_only(agent_client: APIClient, workdir: Path) -> None:
    turn(agent_client, "resolve", workdir)

    with CaptureQueriesContext(connection) as queries:
        response = turn(agent_client, "resolve", workdir)

    assert response.status_code == 200
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert statements == ["SELECT", "SELECT"]  # the token, the stored prompt


# --- concurrency (real connections: one per thread) ---------------------------------


def run_together(count: int, call: Callable[[int], Any]) -> list[Any]:
    """Run ``call(i)`` in ``count`` threads released at once; each closes its connection."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = call(index)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


@pytest.mark.django_db(transaction=True)
def test_resolve_concurrent_first_turns_store_one_row(
    agent_host: User, workdir: Path, settings: Settings
) -> None:
    make_repo(workdir)
    TemplateVersion.objects.create(
        prompt=default_prompt(),
        number=1,
        text="[git:branch] [git:status] [system:time]",
        created_at="2026-01-01T00:00Z",
    )
    key = Token.objects.create(user=agent_host).key

    def first_turn(index: int) -> tuple[int, bytes]:
        response = Client().post(
            CONVERSATION.format("race") + "/resolve",
            {"cwd": str(workdir), "model": f"m-{index}"},
            content_type="application/json",
            headers={"Authorization": f"Token {key}"},
        )
        return response.status_code, response.content

    results = run_together(50, first_turn)

    assert sorted(code for code, _ in results) == [200] * 49 + [201]
    answers = [json.loads(body) for _, body in results]
    for index, answer in enumerate(answers):  # the frozen prompt; another model is told so
        told = answer.pop("context_mismatch", [])
        assert told == ([] if answer["model"] == f"m-{index}" else ["model"])
    assert len({json.dumps(answer, sort_keys=True) for answer in answers}) == 1
    assert ConversationPrompt.objects.filter(conversation_id="race").count() == 1


@pytest.mark.django_db(transaction=True)
def test_put_concurrent_if_match_one_wins(author: User) -> None:
    etag = token_client(author).get(TEMPLATE)["ETag"]
    key = Token.objects.get(user=author).key

    def save(index: int) -> int:
        response = Client().put(
            TEMPLATE,
            {"template": f"writer {index}"},
            content_type="application/json",
            headers={"Authorization": f"Token {key}", "If-Match": etag},
        )
        return response.status_code

    codes = run_together(10, save)

    assert sorted(codes) == [200] + [412] * 9
    assert TemplateVersion.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_put_concurrent_without_if_match_keeps_every_version(author: User) -> None:
    key = Token.objects.create(user=author).key

    def save(index: int) -> tuple[int, Any]:
        response = Client().put(
            TEMPLATE,
            {"template": f"writer {index}"},
            content_type="application/json",
            headers={"Authorization": f"Token {key}"},
        )
        return response.status_code, response.json()

    results = run_together(10, save)

    assert [code for code, _ in results] == [200] * 10
    assert [body["template"] for _, body in results] == [f"writer {i}" for i in range(10)]
    assert sorted(body["version"] for _, body in results) == list(range(1, 11))
    stored = {v.number: v.text for v in TemplateVersion.objects.all()}
    assert {body["version"]: body["template"] for _, body in results} == stored


# --- the global template ------------------------------------------------------------


def test_template_get_default_before_any_put(agent_client: APIClient) -> None:
    response = agent_client.get(TEMPLATE)

    assert response.status_code == 200
    assert response.json() == {
        "template": DEFAULT_TEMPLATE,
        "version": 0,
        "updated_at": None,
        "is_default": True,
        "compress": False,
    }
    assert response["ETag"].startswith('"0-')


@pytest.mark.parametrize("text", ["", "a\r\nb\r\n", "  trailing  ", "é ✓ 🙂"])
def test_template_put_round_trips_byte_for_byte(author_client: APIClient, text: str) -> None:
    saved = put_template(author_client, text)
    loaded = author_client.get(TEMPLATE)

    assert saved.status_code == 200
    assert saved.json() == loaded.json()
    assert loaded.json()["template"] == text
    assert loaded.json()["version"] == 1
    assert loaded.json()["is_default"] is False
    assert saved["ETag"] == loaded["ETag"]


def test_template_put_stale_if_match_is_412_and_changes_nothing(author_client: APIClient) -> None:
    stale = author_client.get(TEMPLATE)["ETag"]
    put_template(author_client, "one")
    current = author_client.get(TEMPLATE)["ETag"]

    response = put_template(author_client, "two", **{"If-Match": stale})

    assert response.status_code == 412
    assert "version 1" in response.json()["detail"]
    assert response["ETag"] == current
    assert author_client.get(TEMPLATE).json()["template"] == "one"


def test_template_put_current_if_match_saves(author_client: APIClient) -> None:
    etag = author_client.get(TEMPLATE)["ETag"]

    response = put_template(author_client, "one", **{"If-Match": etag})

    assert response.status_code == 200
    assert response["ETag"] != etag


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"template": 3}, "Must be a JSON string, not a number."),
        ({"template": 3.5}, "Must be a JSON string, not a number."),
        ({"template": True}, "Must be a JSON string, not a boolean."),
        ({"template": None}, "This field may not be null."),
        ({"template": ["a"]}, "Must be a JSON string, not a list."),
        ({"template": {"a": 1}}, "Must be a JSON string, not an object."),
        ({}, "This field is required."),
        ({"template": "nul\0byte"}, "Null characters are not allowed."),
    ],
)
def test_template_put_non_string_is_400(
    author_client: APIClient, body: dict[str, object], message: str
) -> None:
    response = author_client.put(TEMPLATE, body, format="json")

    assert response.status_code == 400
    assert response.json() == {"template": [message]}
    assert not TemplateVersion.objects.exists()


@pytest.mark.parametrize(
    "raw", [b"{", b"[1, 2]", b'"text"', b"\xff\xfe", b'{"template": "\\ud800"}']
)
def test_template_put_malformed_body_is_400(author_client: APIClient, raw: bytes) -> None:
    body: Any = raw  # the stubs say str; Django's client sends bytes as they are
    response = author_client.generic("PUT", TEMPLATE, body, content_type="application/json")

    assert response.status_code == 400
    assert set(response.json()) & {"detail", "template", "non_field_errors"}
    assert not TemplateVersion.objects.exists()


def test_template_put_form_body_is_415(author_client: APIClient) -> None:
    response = author_client.put(TEMPLATE, "template=x", content_type="text/plain")

    assert response.status_code == 415


def test_template_put_over_limit_is_413(author_client: APIClient, settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 100}

    response = put_template(author_client, "x" * 101)

    assert response.status_code == 413
    assert response.json() == {
        "detail": "The template is 101 bytes in UTF-8; the limit is 100 bytes "
        "(SYSPROMPT_MAX_TEMPLATE_BYTES)."
    }
    assert put_template(author_client, "x" * 100).status_code == 200


def test_request_body_over_limit_is_413_unread(
    author_client: APIClient, settings: Settings
) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 100}
    body = json.dumps({"template": "x", "padding": " " * 80_000})

    response = author_client.generic("PUT", TEMPLATE, body, content_type="application/json")

    assert response.status_code == 413
    assert "request body is" in response.json()["detail"]


def test_template_put_by_agent_host_is_403(agent_client: APIClient) -> None:
    response = put_template(agent_client, "mine now")

    assert response.status_code == 403
    assert "sysprompt.change_templateversion" in response.json()["detail"]
    assert not TemplateVersion.objects.exists()


def test_variables_lists_file_once_as_dynamic(agent_client: APIClient) -> None:
    variables = agent_client.get(TEMPLATE + "/variables").json()["variables"]

    keys = [(v["type"], v["name"]) for v in variables]
    assert ("system", "time") in keys
    assert ("git", "branch") in keys
    [file] = [v for v in variables if v["type"] == "file"]
    assert file == {
        "type": "file",
        "name": "<path>",
        "description": file["description"],
        "dynamic": True,
    }
    # library.md §1: any name is valid after tool:, var: and fragment: too
    dynamic = {v["type"]: v["name"] for v in variables if v["dynamic"]}
    assert dynamic == {"file": "<path>", "tool": "<name>", "var": "<name>", "fragment": "<name>"}
    assert ("prompt", "provider") in keys


def test_versions_paginated_newest_first(author_client: APIClient) -> None:
    for number in range(1, 6):
        put_template(author_client, f"v{number}")

    page = author_client.get(TEMPLATE + "/versions", {"page_size": 2}).json()
    second = author_client.get(page["next"]).json()

    assert [v["version"] for v in page["results"]] == [5, 4]
    assert [v["template"] for v in second["results"]] == ["v3", "v2"]
    assert page["results"][0]["author"] == "author"
    assert page["previous"] is None


def test_versions_bad_cursor_is_404(agent_client: APIClient) -> None:
    response = agent_client.get(TEMPLATE + "/versions", {"cursor": "garbage"})

    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid cursor"}


def test_preview_renders_lints_and_stores_nothing(agent_client: APIClient, workdir: Path) -> None:
    response = agent_client.post(
        TEMPLATE + "/preview",
        {
            "cwd": str(workdir),
            "model": "m",
            "template": (
                "[if file:AGENTS.md][file:AGENTS.md][endif][prompt:model] [nope:x][git:branch]."
            ),
        },
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body["system_prompt"] == "Run the tests before you commit.m ."
    assert body["variables"] == {
        "file:AGENTS.md": "Run the tests before you commit.",
        "prompt:model": "m",
        "nope:x": None,
        "git:branch": None,
    }
    assert body["diagnostics"] == [
        {
            "line": 1,
            "column": 58,
            "end_column": 66,
            "severity": "warning",
            "message": body["diagnostics"][0]["message"],
        }
    ]
    assert body["diagnostics"][0]["message"].startswith("unknown variable type 'nope'")
    assert not ConversationPrompt.objects.exists()
    assert not TemplateVersion.objects.exists()


def test_preview_defaults_to_current_template(author_client: APIClient, workdir: Path) -> None:
    put_template(author_client, "current [prompt:conversation_id]")

    response = author_client.post(
        TEMPLATE + "/preview", {"cwd": str(workdir), "conversation_id": "c7"}, format="json"
    )

    assert response.json()["system_prompt"] == "current c7"
    assert response.json()["diagnostics"] == []


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("file:nope", "no such file"),
        ("file:bin", "binary: contains NUL bytes"),
        ("file:latin", "not UTF-8"),
        ("file:dir", "not a regular file"),
        ("file:../../x", "outside the allowed roots"),
        ("git:branch", "not a git repository"),
        ("nope:x", "unknown variable type 'nope'"),
    ],
)
def test_preview_gives_the_reason_when_a_variable_does_not_exist(
    agent_client: APIClient, workdir: Path, key: str, reason: str
) -> None:
    (workdir / "bin").write_bytes(b"a\0b")
    (workdir / "latin").write_bytes(b"caf\xe9")
    (workdir / "dir").mkdir()

    response = agent_client.post(
        TEMPLATE + "/preview",
        {"cwd": str(workdir), "template": f"[{key}][file:AGENTS.md]"},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["variables"][key] is None
    assert response.json()["reasons"] == {key: reason}  # none for AGENTS.md, which exists


# --- per-conversation prompts -------------------------------------------------------


def test_resolve_first_201_then_200_same_body(agent_client: APIClient, workdir: Path) -> None:
    first = turn(agent_client, "resolve", workdir, model="m")
    later = turn(agent_client, "resolve", workdir, model="other")

    assert (first.status_code, later.status_code) == (201, 200)
    assert later.json() == {**first.json(), "context_mismatch": ["model"]}  # and says so
    body = first.json()
    assert set(body) == {
        "conversation_id",
        "prompt",  # named prompts: the prompt it is frozen from
        "system_prompt",
        "template_version",
        "constructed_at",
        "sha256",
        # the frozen context a later turn is compared with
        "cwd",
        "model",
        # the host context it was built for (library.md §3)
        "provider",
        "tools",
        "variables",
        "override",
        "fragments_used",
        # the shared prefix (agent-hosts §1)
        "shared_prefix_chars",
        # what it was built from (releases §2)
        "label",
        "release",
        "arm",
    }
    assert body["sha256"] == sha256(body["system_prompt"])
    assert (body["conversation_id"], body["template_version"]) == ("c1", 0)
    assert (body["label"], body["release"], body["arm"]) == ("production", None, None)


def test_get_stored_prompt_or_404(agent_client: APIClient, workdir: Path) -> None:
    assert agent_client.get(CONVERSATION.format("c1")).status_code == 404
    stored = turn(agent_client, "resolve", workdir).json()

    response = agent_client.get(CONVERSATION.format("c1"))

    assert response.status_code == 200
    assert response.json() == stored


def test_get_null_prompt_is_200_with_null(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    put_template(author_client, "")
    turn(agent_client, "resolve", workdir)
    put_template(author_client, "a prompt now")

    response = agent_client.get(CONVERSATION.format("c1"))

    assert response.status_code == 200
    assert (response.json()["system_prompt"], response.json()["sha256"]) == (None, None)
    assert turn(agent_client, "resolve", workdir).json()["system_prompt"] is None


def test_construct_replaces_and_reports_version(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    assert turn(agent_client, "construct", workdir).status_code == 201
    put_template(author_client, "new [prompt:model]")

    response = turn(agent_client, "construct", workdir, model="m")

    assert response.status_code == 200
    assert (response.json()["system_prompt"], response.json()["template_version"]) == ("new m", 1)
    assert turn(agent_client, "resolve", workdir).json()["system_prompt"] == "new m"


def test_compact_answers_fresh_plus_instructions(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    turn(agent_client, "resolve", workdir)
    put_template(author_client, "fresh")

    body = turn(agent_client, "compact", workdir).json()

    assert body["system_prompt"] == "fresh\n\n" + DEFAULT_COMPACTION_INSTRUCTIONS
    assert body["persisted_system_prompt"] == "fresh"
    assert body["sha256"] == sha256("fresh")
    assert agent_client.get(CONVERSATION.format("c1")).json()["system_prompt"] == "fresh"


def test_compact_null_prompt_answers_instructions_alone(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    put_template(author_client, "")

    body = turn(agent_client, "compact", workdir).json()

    assert body["system_prompt"] == DEFAULT_COMPACTION_INSTRUCTIONS
    assert body["persisted_system_prompt"] is None


def test_delete_204_then_404(agent_client: APIClient, workdir: Path) -> None:
    turn(agent_client, "resolve", workdir)

    assert agent_client.delete(CONVERSATION.format("c1")).status_code == 204
    assert agent_client.delete(CONVERSATION.format("c1")).status_code == 404
    assert agent_client.get(CONVERSATION.format("c1")).status_code == 404


def test_conversations_list_paginated_without_prompt_text(
    agent_client: APIClient, workdir: Path
) -> None:
    for number in range(3):
        turn(agent_client, "resolve", workdir, conversation_id=f"c{number}", model="m")

    page = agent_client.get("/api/conversations", {"page_size": 2}).json()
    rest = agent_client.get(page["next"]).json()

    assert [c["conversation_id"] for c in page["results"] + rest["results"]] == ["c2", "c1", "c0"]
    assert set(page["results"][0]) == {
        "conversation_id",
        "prompt",
        "host",
        "template_version",
        "cwd",
        "model",
        "constructed_at",
        "created_at",
        "sha256",
        "provider",
        "tools",
        "variables",
        "override",
        "fragments_used",
        "label",
        "release",
        "arm",
    }
    assert page["results"][0]["cwd"] == str(workdir)


@pytest.mark.parametrize(
    ("conversation_id", "action"),
    [
        ("bad%20id", "resolve"),
        ("x" * 201, "resolve"),
        ("%C3%A9", "construct"),
        ("semi;colon", "compact"),
    ],
)
def test_bad_conversation_id_is_400(
    agent_client: APIClient, workdir: Path, conversation_id: str, action: str
) -> None:
    response = turn(agent_client, action, workdir, conversation_id=conversation_id)

    assert response.status_code == 400
    assert "is not a valid conversation id" in response.json()["conversation_id"][0]
    assert not ConversationPrompt.objects.exists()


@pytest.mark.parametrize("method", ["get", "delete"])
def test_bad_conversation_id_on_stored_prompt_is_400(agent_client: APIClient, method: str) -> None:
    response = getattr(agent_client, method)(CONVERSATION.format("bad%20id"))

    assert response.status_code == 400


@pytest.mark.parametrize(
    ("cwd", "message"),
    [
        ("relative", "is not an absolute path"),
        ("/", "is outside the allowed roots"),
        ("{root}/missing", "is not an existing directory"),
        ("{root}/project/AGENTS.md", "is not an existing directory"),
        (3, "Must be a JSON string, not a number."),
        (None, "This field may not be null."),
        ("", "This field may not be blank."),
    ],
)
def test_bad_cwd_is_400(
    agent_client: APIClient, workdir: Path, allowed_root: Path, cwd: object, message: str
) -> None:
    value = cwd.format(root=allowed_root) if isinstance(cwd, str) else cwd

    response = agent_client.post(
        CONVERSATION.format("c1") + "/resolve", {"cwd": value}, format="json"
    )

    assert response.status_code == 400
    assert message in response.json()["cwd"][0]
    assert not ConversationPrompt.objects.exists()


def test_missing_cwd_is_400(agent_client: APIClient) -> None:
    response = agent_client.post(CONVERSATION.format("c1") + "/resolve", {}, format="json")

    assert response.json() == {"cwd": ["This field is required."]}


# --- health -------------------------------------------------------------------------


def test_health_ok_with_token(agent_client: APIClient) -> None:
    response = agent_client.get("/api/health")

    assert (response.status_code, response.json()) == (200, {"status": "ok", "database": "ok"})


# --- authentication and CSRF --------------------------------------------------------

ENDPOINTS = [
    ("get", TEMPLATE),
    ("put", TEMPLATE),
    ("get", TEMPLATE + "/variables"),
    ("get", TEMPLATE + "/versions"),
    ("post", TEMPLATE + "/preview"),
    ("get", "/api/conversations"),
    ("get", CONVERSATION.format("c1")),
    ("delete", CONVERSATION.format("c1")),
    ("post", CONVERSATION.format("c1") + "/resolve"),
    ("post", CONVERSATION.format("c1") + "/construct"),
    ("post", CONVERSATION.format("c1") + "/compact"),
    ("get", "/api/health"),
    ("get", "/api/schema/"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_unauthenticated_is_401(workdir: Path, method: str, path: str) -> None:
    response = getattr(APIClient(), method)(path, {"cwd": str(workdir)}, format="json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert not ConversationPrompt.objects.exists()


@pytest.mark.parametrize("header", ["Token wrong", "Bearer wrong", "Token", "Basic YTpi"])
def test_bad_credentials_are_401(header: str) -> None:
    response = APIClient().get("/api/health", headers={"Authorization": header})

    assert response.status_code == 401


def test_bearer_token_is_accepted(agent_host: User) -> None:
    key = Token.objects.create(user=agent_host).key

    response = APIClient().get("/api/health", headers={"Authorization": f"Bearer {key}"})

    assert response.status_code == 200


def test_inactive_user_token_is_401(agent_host: User, agent_client: APIClient) -> None:
    agent_host.is_active = False
    agent_host.save()

    assert agent_client.get("/api/health").status_code == 401


@pytest.mark.parametrize(
    ("method", "path"), [(m, p) for m, p in ENDPOINTS if m in {"put", "post", "delete"}]
)
def test_session_write_without_csrf_is_403(
    author: User, workdir: Path, method: str, path: str
) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(author)

    response = getattr(client, method)(path, {"cwd": str(workdir), "template": "x"}, format="json")

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not ConversationPrompt.objects.exists()
    assert not TemplateVersion.objects.exists()


def test_session_write_with_csrf_token_succeeds(author: User, workdir: Path) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)
    client.get("/accounts/login/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value

    response = client.post(
        CONVERSATION.format("c1") + "/resolve",
        {"cwd": str(workdir)},
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )

    assert response.status_code == 201


def test_session_read_needs_no_csrf(author: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)

    assert client.get(TEMPLATE).status_code == 200


def test_resolve_file_with_nul_byte_is_missing_not_500(
    agent_client: APIClient, workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_bytes(b"valid UTF-8 \x00 but binary\n")

    response = turn(agent_client, "resolve", workdir)

    assert response.status_code == 201
    assert "\x00" not in response.json()["system_prompt"]
    assert "binary" not in response.json()["system_prompt"]


@pytest.mark.parametrize("text", ["a prompt [prompt:model]", ""])
def test_prompt_payload_matches_output_serializer(
    author_client: APIClient, agent_client: APIClient, workdir: Path, text: str
) -> None:
    put_template(author_client, text)
    turn(agent_client, "resolve", workdir, model="m")
    row = ConversationPrompt.objects.get()

    fast = prompt_payload(selectors.conversation_prompt_get("c1", row.owner_id) or row)

    assert fast == dict(ConversationPromptOutputSerializer(row).data)
