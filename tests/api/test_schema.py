"""The REST API against its own OpenAPI schema: schemathesis fuzzing, and the schema itself.

Schemathesis generates requests from the schema that ``/api/schema/`` serves and sends
them in-process to the real Django WSGI app, authenticated with a real DRF token of a
superuser. Every answer must agree with the schema: no 5xx, a documented status code and
content type, a body that conforms. The plain tests below check the schema against the
contract (``docs/api-reference.md``) and the pages that serve it.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import hypothesis
import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import OperationalError, close_old_connections
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import strategies as st
from pytest_django import Settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.specs.openapi.checks import positive_data_acceptance

from config.wsgi import application
from sysprompt.accounts.services import agent_host_ensure
from sysprompt.prompts import selectors
from sysprompt_core.limits import CWD_MAX_LENGTH

TEMPLATE = "/api/system-prompt"
VARIABLES = "/api/system-prompt/variables"
VERSIONS = "/api/system-prompt/versions"
PREVIEW = "/api/system-prompt/preview"
REFERENCES = "/api/system-prompt/references"
CONVERSATIONS = "/api/conversations"
CONVERSATION = "/api/conversations/{conversation_id}/system-prompt"
HEALTH = "/api/health"
ME = "/api/me"
LIBRARY = "/api/library"
FRAGMENT = "/api/library/fragments/{name}"
FRAGMENT_VERSIONS = "/api/library/fragments/{name}/versions"
LIBRARY_PREVIEW = "/api/library/preview"
EXPORT = "/api/library/export"
IMPORT = "/api/library/import"
HOST_OVERRIDE = "/api/agent-hosts/{username}/override"
WEBHOOKS = "/api/webhooks"
WEBHOOK = "/api/webhooks/{id}"
WEBHOOK_DELIVERIES = "/api/webhooks/{id}/deliveries"
WEBHOOK_TEST = "/api/webhooks/{id}/test"
AUDIT = "/api/audit"
HOST_LABEL = "/api/agent-hosts/{username}/label"
RELEASES = "/api/releases"
RELEASE = "/api/releases/{number}"
RELEASE_COMPARE = "/api/releases/{number}/compare"
IMPACT = "/api/releases/impact"
LABELS = "/api/labels"
LABEL = "/api/labels/{name}"
LABEL_HISTORY = "/api/labels/{name}/history"
LABEL_ROLLBACK = "/api/labels/{name}/rollback"
TEST_CONTEXTS = "/api/test-contexts"
TEST_CONTEXT = "/api/test-contexts/{name}"
PER_PROMPT = "/api/prompts/{prompt}/-"
PROMPT_RELEASES = f"{PER_PROMPT}/releases"
PROMPT_RELEASE = f"{PER_PROMPT}/releases/{{number}}"
PROMPT_RELEASE_COMPARE = f"{PER_PROMPT}/releases/{{number}}/compare"
PROMPT_IMPACT = f"{PER_PROMPT}/releases/impact"
PROMPT_LABELS = f"{PER_PROMPT}/labels"
PROMPT_LABEL = f"{PER_PROMPT}/labels/{{name}}"
PROMPT_LABEL_HISTORY = f"{PER_PROMPT}/labels/{{name}}/history"
PROMPT_LABEL_ROLLBACK = f"{PER_PROMPT}/labels/{{name}}/rollback"
PROMPT_TEST_CONTEXTS = f"{PER_PROMPT}/test-contexts"
PROMPT_TEST_CONTEXT = f"{PER_PROMPT}/test-contexts/{{name}}"
FRAGMENT_IMPACT = "/api/library/fragments/{name}/impact"
MODELS = "/api/models"
SUITES = "/api/suites"
SUITE = "/api/suites/{name}"
CASES = "/api/suites/{name}/cases"
CASE = "/api/suites/{name}/cases/{case}"
SUITE_IMPORT = "/api/suites/{name}/import"
SUITE_EXPORT = "/api/suites/{name}/export"
IN_PROMPT = "/api/prompts/{prompt}/-"
PROMPT_SUITES = f"{IN_PROMPT}/suites"
PROMPT_SUITE = f"{IN_PROMPT}/suites/{{name}}"
PROMPT_CASES = f"{IN_PROMPT}/suites/{{name}}/cases"
PROMPT_CASE = f"{IN_PROMPT}/suites/{{name}}/cases/{{case}}"
PROMPT_SUITE_IMPORT = f"{IN_PROMPT}/suites/{{name}}/import"
PROMPT_SUITE_EXPORT = f"{IN_PROMPT}/suites/{{name}}/export"
EVALUATIONS = "/api/evaluations"
EVALUATION_PLAN = "/api/evaluations/plan"
EVALUATION = "/api/evaluations/{id}"
EVALUATION_RESULTS = "/api/evaluations/{id}/results"
EVALUATION_CANCEL = "/api/evaluations/{id}/cancel"
PROMPTS = "/api/prompts"
PROMPT = "/api/prompts/{prompt}"
PROMPT_RENAME = "/api/prompts/{prompt}/-/rename"
PROMPT_ARCHIVE = "/api/prompts/{prompt}/-/archive"
PROMPT_UNARCHIVE = "/api/prompts/{prompt}/-/unarchive"
PROMPT_DUPLICATE = "/api/prompts/{prompt}/-/duplicate"
FOLDER = "/api/folders/{folder}"
# named prompts: a prompt's template, an agent host's conversations and prompts
PROMPT_TEMPLATE = "/api/prompts/{prompt}/-/system-prompt"
HOST_CONVERSATION = "/api/agent-hosts/{username}/conversations/{conversation_id}/system-prompt"
HOST_PROMPTS = "/api/agent-hosts/{username}/prompts"

VALID_CWD = "/<valid cwd>"
"""Stands for an existing directory inside the allowed roots; the test fills it in."""

# A cwd's validity depends on the server's folders and settings, which the schema cannot
# say: a schema-valid cwd may rightly answer 400, which this check would call a failure.
EXCLUDED_CHECKS: list[CheckFunction] = [positive_data_acceptance]


def _generated_schema() -> dict[str, Any]:
    """What ``/api/schema/`` serves (test_schema_endpoint_serves_the_fuzzed_schema), as JSON."""
    generator = SchemaGenerator()  # type: ignore[no-untyped-call]
    document = generator.get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    loaded: dict[str, Any] = json.loads(json.dumps(document))
    return loaded


def zip_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return buffer.getvalue()


VALID_ZIP = zip_of(
    {"system-prompt.md": "[fragment:core]", "core.md": "Core.\n", "providers/openai/core.md": "O"}
)
"""An archive the import accepts: half of the generated zip bodies are replaced by it."""

schema = schemathesis.openapi.from_dict(_generated_schema())
schema.app = application
# The import's body is a zip: sent as generated, like any binary body.
schemathesis.serializer.alias("application/zip", "application/octet-stream")


@schema.hook
def flatmap_body(context: schemathesis.HookContext, body: Any) -> st.SearchStrategy[Any]:
    """Half of the bodies with a valid ``cwd`` name a directory that exists and is allowed,
    and half of the binary bodies (the import's) are a valid zip archive.

    Only a ``cwd`` the schema allows is replaced, so a case generated to break the schema
    in ``cwd`` still does.
    """
    if isinstance(body, bytes):
        return st.sampled_from([body, VALID_ZIP])
    cwd = body.get("cwd") if isinstance(body, dict) else None
    if isinstance(cwd, str) and 1 <= len(cwd) <= CWD_MAX_LENGTH:
        return st.sampled_from([body, {**body, "cwd": VALID_CWD}])
    return st.just(body)


@pytest.fixture
def in_process_requests() -> Iterator[None]:
    """Keep the test's database connection across requests, as Django's test client does.

    The WSGI handler closes connections when a request starts and ends; inside the
    test's transaction that would close the connection under the test.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def superuser(db: None) -> User:
    return User.objects.create_superuser("fuzzer", "", "not-used-here")


@pytest.fixture
def auth(superuser: User, in_process_requests: None) -> dict[str, str]:
    """Headers with a real API token of a superuser."""
    return {"Authorization": f"Token {Token.objects.create(user=superuser).key}"}


@pytest.fixture
def fuzz_root(tmp_path: Path, settings: Settings) -> Path:
    """The only allowed root, with an AGENTS.md for the default template's ``file:``."""
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(tmp_path)]}
    (tmp_path / "AGENTS.md").write_text("Run the tests before you commit.\n")
    return tmp_path


@schema.parametrize()
@hypothesis.settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        # One database transaction and one allowed root per operation, shared by its cases.
        hypothesis.HealthCheck.function_scoped_fixture,
        # Each case is a request through the whole app and its database.
        hypothesis.HealthCheck.too_slow,
    ],
)
def test_api_conforms_to_its_schema(
    case: schemathesis.Case[Any], auth: dict[str, str], fuzz_root: Path
) -> None:
    if isinstance(case.body, dict) and case.body.get("cwd") == VALID_CWD:
        case.body["cwd"] = str(fuzz_root)

    case.call_and_validate(headers=auth, excluded_checks=EXCLUDED_CHECKS)


# Explicit cases, sent and checked like the fuzzer's: each answer schemathesis found
# contradicting the schema, and one answer of each documented error.


def _call(
    path: str,
    method: str,
    headers: dict[str, str] | None = None,
    *,
    expect_server_error: bool = False,
    **case: Any,
) -> schemathesis.Response:
    """Send one explicit case to the WSGI app; fail when the answer contradicts the schema."""
    made = schema[path][method].Case(**case)
    excluded: list[CheckFunction] = [*EXCLUDED_CHECKS]
    if expect_server_error:
        excluded.append(not_a_server_error)
    return made.call_and_validate(headers=headers, excluded_checks=excluded)


def _cursor(link: str) -> str:
    values = parse_qs(urlsplit(link).query)["cursor"]
    return values[0]


@pytest.mark.parametrize("path", [VERSIONS, CONVERSATIONS])
def test_list_answers_the_documented_page_when_called(
    auth: dict[str, str], fuzz_root: Path, path: str
) -> None:
    for index in range(3):
        _call(TEMPLATE, "PUT", auth, body={"template": f"v{index}"})
        _call(
            CONVERSATION + "/resolve",
            "POST",
            auth,
            path_parameters={"conversation_id": f"c{index}"},
            body={"cwd": str(fuzz_root)},
        )

    first = _call(path, "GET", auth, query={"page_size": "2"})
    rest = _call(path, "GET", auth, query={"cursor": _cursor(first.json()["next"])})

    assert sorted(first.json()) == ["next", "previous", "results"]
    assert len(first.json()["results"]) == 2
    assert len(rest.json()["results"]) == 1
    assert rest.json()["next"] is None


@pytest.mark.parametrize("path", [VERSIONS, CONVERSATIONS])
@pytest.mark.parametrize("page_size", ["0", "-1", "abc", "1.5", "", " 2", "²", "null"])
def test_list_refuses_page_size_when_not_a_whole_number_from_1(
    auth: dict[str, str], path: str, page_size: str
) -> None:
    response = _call(path, "GET", auth, query={"page_size": page_size})

    assert response.status_code == 400
    assert "whole number from 1" in response.json()["page_size"][0]


@pytest.mark.parametrize("page_size", ["1000", "9" * 5000])
def test_list_caps_page_size_when_over_the_maximum(auth: dict[str, str], page_size: str) -> None:
    for index in range(3):
        _call(TEMPLATE, "PUT", auth, body={"template": f"v{index}"})

    response = _call(VERSIONS, "GET", auth, query={"page_size": page_size})

    assert response.status_code == 200
    assert len(response.json()["results"]) == 3


@pytest.mark.parametrize("if_match", ["", ",", "0-abc", '"unterminated', "version 1"])
def test_put_refuses_if_match_when_not_an_entity_tag(auth: dict[str, str], if_match: str) -> None:
    response = _call(TEMPLATE, "PUT", {**auth, "If-Match": if_match}, body={"template": "new"})

    assert response.status_code == 400
    assert "is not an entity tag" in response.json()["If-Match"][0]
    assert _call(TEMPLATE, "GET", auth).json()["is_default"] is True


def test_put_answers_412_with_the_current_etag_when_if_match_is_stale(
    auth: dict[str, str],
) -> None:
    stale = _call(TEMPLATE, "GET", auth).headers["etag"][0]
    _call(TEMPLATE, "PUT", auth, body={"template": "one"})

    response = _call(TEMPLATE, "PUT", {**auth, "If-Match": stale}, body={"template": "two"})

    assert response.status_code == 412
    assert response.headers["etag"] == _call(TEMPLATE, "GET", auth).headers["etag"]


def test_put_saves_when_if_match_is_a_star(auth: dict[str, str]) -> None:
    response = _call(TEMPLATE, "PUT", {**auth, "If-Match": "*"}, body={"template": "new"})

    assert response.status_code == 200
    assert response.json()["template"] == "new"


CONVERSATION_OPERATIONS = [
    (CONVERSATION, "GET"),
    (CONVERSATION, "DELETE"),
    (CONVERSATION + "/resolve", "POST"),
    (CONVERSATION + "/construct", "POST"),
    (CONVERSATION + "/compact", "POST"),
]


@pytest.mark.parametrize(("path", "method"), CONVERSATION_OPERATIONS)
@pytest.mark.parametrize("conversation_id", ["a/b", "a/b/system-prompt", "x" * 201, "a b", "é"])
def test_conversation_refuses_id_with_400_when_invalid(
    auth: dict[str, str], fuzz_root: Path, path: str, method: str, conversation_id: str
) -> None:
    body: dict[str, Any] = {"body": {"cwd": str(fuzz_root)}} if method == "POST" else {}
    response = _call(
        path, method, auth, path_parameters={"conversation_id": conversation_id}, **body
    )

    assert response.status_code == 400
    assert "is not a valid conversation id" in response.json()["conversation_id"][0]


@pytest.mark.parametrize("suffix", ["", "/resolve"])
@pytest.mark.parametrize("encoded_id", ["", "line%0Abreak", "%0A"])
def test_conversation_refuses_id_with_400_when_empty_or_with_a_line_break(
    auth: dict[str, str], fuzz_root: Path, suffix: str, encoded_id: str
) -> None:
    # Sent with Django's client: the HTTP clients schemathesis uses drop "//" and "\n".
    url = f"/api/conversations/{encoded_id}/system-prompt{suffix}"
    client = Client(headers=auth)
    response = (
        client.post(url, {"cwd": str(fuzz_root)}, content_type="application/json")
        if suffix
        else client.get(url)
    )

    assert response.status_code == 400
    assert "is not a valid conversation id" in response.json()["conversation_id"][0]


@pytest.mark.parametrize("model", ["\v" + "m" * 200, "m" * 200 + " "])
def test_conversation_refuses_model_when_over_200_characters_with_whitespace(
    auth: dict[str, str], fuzz_root: Path, model: str
) -> None:
    response = _call(
        CONVERSATION + "/construct",
        "POST",
        auth,
        path_parameters={"conversation_id": "c1"},
        body={"cwd": str(fuzz_root), "model": model},
    )

    assert response.status_code == 400
    assert "model" in response.json()


def test_conversation_stores_model_byte_for_byte_when_resolved(
    auth: dict[str, str], fuzz_root: Path
) -> None:
    _call(
        CONVERSATION + "/resolve",
        "POST",
        auth,
        path_parameters={"conversation_id": "c1"},
        body={"cwd": str(fuzz_root), "model": " gpt\t"},
    )

    listed = _call(CONVERSATIONS, "GET", auth).json()["results"]

    assert [item["model"] for item in listed] == [" gpt\t"]


OPERATIONS: dict[tuple[str, str], set[int]] = {
    # Every operation of docs/api-reference.md: every status its view can answer.
    (TEMPLATE, "GET"): {200, 401, 403, 503},
    (TEMPLATE, "PUT"): {200, 400, 401, 403, 412, 413, 415, 503},
    (VARIABLES, "GET"): {200, 401, 403, 503},
    (VERSIONS, "GET"): {200, 400, 401, 403, 404, 503},
    (PREVIEW, "POST"): {200, 400, 401, 403, 413, 415, 503},
    (CONVERSATION + "/resolve", "POST"): {200, 201, 400, 401, 403, 404, 409, 410, 413, 415, 503},
    (ME, "GET"): {200, 401, 403, 503},
    (CONVERSATION + "/construct", "POST"): {200, 201, 400, 401, 403, 404, 409, 410, 413, 415, 503},
    (CONVERSATION, "GET"): {200, 304, 400, 401, 403, 404, 409, 503},
    (CONVERSATION + "/compact", "POST"): {200, 201, 400, 401, 403, 404, 409, 410, 413, 415, 503},
    (CONVERSATION, "DELETE"): {204, 400, 401, 403, 404, 409, 503},
    (CONVERSATIONS, "GET"): {200, 400, 401, 403, 404, 503},
    # library.md §8
    (LIBRARY, "GET"): {200, 400, 401, 403, 404, 503},
    (FRAGMENT, "GET"): {200, 400, 401, 403, 404, 503},
    (FRAGMENT, "PUT"): {200, 201, 400, 401, 403, 412, 413, 415, 503},
    (FRAGMENT, "DELETE"): {200, 400, 401, 403, 404, 412, 503},
    (FRAGMENT_VERSIONS, "GET"): {200, 400, 401, 403, 404, 503},
    (LIBRARY_PREVIEW, "POST"): {200, 400, 401, 403, 413, 415, 503},
    (EXPORT, "GET"): {200, 401, 403, 409, 503},
    (IMPORT, "POST"): {200, 400, 401, 403, 413, 415, 503},
    (HOST_OVERRIDE, "GET"): {200, 400, 401, 403, 404, 503},
    (HOST_OVERRIDE, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    # agent-hosts.md §0
    (REFERENCES, "GET"): {200, 304, 400, 401, 403, 404, 503},
    # docs/events.md
    (WEBHOOKS, "GET"): {200, 401, 403, 503},
    (WEBHOOKS, "POST"): {201, 400, 401, 403, 415, 503},
    (WEBHOOK, "GET"): {200, 401, 403, 404, 503},
    (WEBHOOK, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    (WEBHOOK, "DELETE"): {204, 401, 403, 404, 503},
    (WEBHOOK_DELIVERIES, "GET"): {200, 400, 401, 403, 404, 503},
    (WEBHOOK_TEST, "POST"): {202, 401, 403, 404, 503},
    (AUDIT, "GET"): {200, 400, 401, 403, 404, 503},
    # releases §5
    (RELEASES, "GET"): {200, 400, 401, 403, 404, 503},
    (RELEASES, "POST"): {200, 201, 400, 401, 403, 415, 503},
    (RELEASE, "GET"): {200, 401, 403, 404, 503},
    (RELEASE_COMPARE, "GET"): {200, 400, 401, 403, 404, 503},
    (IMPACT, "POST"): {200, 400, 401, 403, 404, 415, 503},
    (LABELS, "GET"): {200, 400, 401, 403, 404, 503},
    (LABEL, "GET"): {200, 400, 401, 403, 404, 503},
    (LABEL, "PUT"): {200, 201, 400, 401, 403, 404, 415, 503},
    (LABEL_HISTORY, "GET"): {200, 400, 401, 403, 404, 503},
    (LABEL_ROLLBACK, "POST"): {200, 400, 401, 403, 404, 415, 503},
    (TEST_CONTEXTS, "GET"): {200, 400, 401, 403, 404, 503},
    (TEST_CONTEXTS, "POST"): {201, 400, 401, 403, 415, 503},
    (TEST_CONTEXT, "GET"): {200, 400, 401, 403, 404, 503},
    (TEST_CONTEXT, "PUT"): {200, 201, 400, 401, 403, 415, 503},
    (TEST_CONTEXT, "DELETE"): {204, 400, 401, 403, 404, 503},
    (HOST_LABEL, "GET"): {200, 400, 401, 403, 404, 503},
    (HOST_LABEL, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    # named prompts §4: a prompt's releases, labels and test contexts
    (PROMPT_RELEASES, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_RELEASES, "POST"): {200, 201, 400, 401, 403, 404, 415, 503},
    (PROMPT_RELEASE, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_RELEASE_COMPARE, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_IMPACT, "POST"): {200, 400, 401, 403, 404, 415, 503},
    (PROMPT_LABELS, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_LABEL, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_LABEL, "PUT"): {200, 201, 400, 401, 403, 404, 415, 503},
    (PROMPT_LABEL_HISTORY, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_LABEL_ROLLBACK, "POST"): {200, 400, 401, 403, 404, 415, 503},
    (PROMPT_TEST_CONTEXTS, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_TEST_CONTEXTS, "POST"): {201, 400, 401, 403, 404, 415, 503},
    (PROMPT_TEST_CONTEXT, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_TEST_CONTEXT, "PUT"): {200, 201, 400, 401, 403, 404, 415, 503},
    (PROMPT_TEST_CONTEXT, "DELETE"): {204, 400, 401, 403, 404, 503},
    (FRAGMENT_IMPACT, "POST"): {200, 400, 401, 403, 404, 415, 503},
    # evaluations §5
    (MODELS, "GET"): {200, 401, 403, 503},
    (SUITES, "GET"): {200, 400, 401, 403, 404, 503},
    (SUITES, "POST"): {201, 400, 401, 403, 415, 503},
    (SUITE, "GET"): {200, 400, 401, 403, 404, 503},
    (SUITE, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    (SUITE, "DELETE"): {204, 400, 401, 403, 404, 503},
    (CASES, "GET"): {200, 400, 401, 403, 404, 503},
    (CASES, "POST"): {201, 400, 401, 403, 404, 415, 503},
    (CASE, "GET"): {200, 400, 401, 403, 404, 503},
    (CASE, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    (CASE, "DELETE"): {204, 400, 401, 403, 404, 503},
    (SUITE_IMPORT, "POST"): {200, 400, 401, 403, 404, 413, 415, 503},
    (SUITE_EXPORT, "GET"): {200, 400, 401, 403, 404, 503},
    # named-prompts §4: a prompt's suites (the same operations; 404 for an unknown prompt)
    (PROMPT_SUITES, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_SUITES, "POST"): {201, 400, 401, 403, 404, 415, 503},
    (PROMPT_SUITE, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_SUITE, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    (PROMPT_SUITE, "DELETE"): {204, 400, 401, 403, 404, 503},
    (PROMPT_CASES, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_CASES, "POST"): {201, 400, 401, 403, 404, 415, 503},
    (PROMPT_CASE, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_CASE, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    (PROMPT_CASE, "DELETE"): {204, 400, 401, 403, 404, 503},
    (PROMPT_SUITE_IMPORT, "POST"): {200, 400, 401, 403, 404, 413, 415, 503},
    (PROMPT_SUITE_EXPORT, "GET"): {200, 400, 401, 403, 404, 503},
    (EVALUATIONS, "GET"): {200, 400, 401, 403, 404, 503},
    (EVALUATIONS, "POST"): {202, 400, 401, 403, 404, 415, 429, 503},
    (EVALUATION_PLAN, "POST"): {200, 400, 401, 403, 404, 415, 503},
    (EVALUATION, "GET"): {200, 401, 403, 404, 503},
    (EVALUATION_RESULTS, "GET"): {200, 400, 401, 403, 404, 503},
    (EVALUATION_CANCEL, "POST"): {200, 401, 403, 404, 503},
    # named prompts §3, §4: the catalog
    (PROMPTS, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPTS, "POST"): {201, 400, 401, 403, 409, 413, 415, 503},
    (PROMPT, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT, "PATCH"): {200, 400, 401, 403, 404, 415, 503},
    (PROMPT, "DELETE"): {204, 400, 401, 403, 404, 409, 503},
    (PROMPT_RENAME, "POST"): {200, 400, 401, 403, 404, 409, 415, 503},
    (PROMPT_ARCHIVE, "POST"): {200, 400, 401, 403, 404, 409, 503},
    (PROMPT_UNARCHIVE, "POST"): {200, 400, 401, 403, 404, 409, 503},
    (PROMPT_DUPLICATE, "POST"): {201, 400, 401, 403, 404, 409, 415, 503},
    (FOLDER, "GET"): {200, 400, 401, 403, 404, 503},
    (FOLDER, "PUT"): {200, 400, 401, 403, 404, 415, 503},
    # named prompts: a prompt's template (the same operations, for the prompt in the path)
    (PROMPT_TEMPLATE, "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_TEMPLATE, "PUT"): {200, 400, 401, 403, 404, 412, 413, 415, 503},
    (PROMPT_TEMPLATE + "/variables", "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_TEMPLATE + "/versions", "GET"): {200, 400, 401, 403, 404, 503},
    (PROMPT_TEMPLATE + "/preview", "POST"): {200, 400, 401, 403, 404, 413, 415, 503},
    (PROMPT_TEMPLATE + "/references", "GET"): {200, 304, 400, 401, 403, 404, 503},
    # an agent host's conversations (ids are scoped to the host) and its prompts
    (HOST_CONVERSATION, "GET"): {200, 304, 400, 401, 403, 404, 503},
    (HOST_CONVERSATION, "DELETE"): {204, 400, 401, 403, 404, 503},
    (HOST_CONVERSATION + "/resolve", "POST"): {
        200,
        201,
        400,
        401,
        403,
        404,
        409,
        410,
        413,
        415,
        503,
    },
    (HOST_CONVERSATION + "/construct", "POST"): {
        200,
        201,
        400,
        401,
        403,
        404,
        409,
        410,
        413,
        415,
        503,
    },
    (HOST_CONVERSATION + "/compact", "POST"): {
        200,
        201,
        400,
        401,
        403,
        404,
        409,
        410,
        413,
        415,
        503,
    },
    (HOST_PROMPTS, "GET"): {200, 401, 403, 404, 503},
    (HOST_PROMPTS, "PUT"): {200, 400, 401, 403, 404, 415, 503},
}
NOT_IN_THE_CONTRACT = {(HEALTH, "GET"): {200, 401, 403, 503}}


PATH_PARAMETERS = {
    "conversation_id": "c1",
    "name": "core",
    "username": "host-1",
    "id": 1,
    "number": 1,
    "case": "c1",
    "prompt": "default",
    "folder": "support",
}


def _case_arguments(path: str) -> dict[str, Any]:
    parameters = {k: v for k, v in PATH_PARAMETERS.items() if f"{{{k}}}" in path}
    return {"path_parameters": parameters} if parameters else {}


@pytest.mark.parametrize(("path", "method"), [*OPERATIONS, *NOT_IN_THE_CONTRACT])
def test_operation_answers_401_when_no_credentials(
    in_process_requests: None, db: None, path: str, method: str
) -> None:
    response = _call(path, method, None, **_case_arguments(path))

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == ["Token"]


def test_put_answers_403_when_the_user_may_not_edit(in_process_requests: None, db: None) -> None:
    user = User.objects.create_user("agent-host", "", "not-used-here")
    token = Token.objects.create(user=user).key

    response = _call(TEMPLATE, "PUT", {"Authorization": f"Token {token}"}, body={"template": ""})

    assert response.status_code == 403
    assert "sysprompt.change_templateversion" in response.json()["detail"]


@pytest.mark.parametrize(("path", "size"), [(TEMPLATE, 9), (PREVIEW, 9), (TEMPLATE, 100_000)])
def test_answers_413_when_the_template_is_over_the_limit(
    auth: dict[str, str], fuzz_root: Path, settings: Settings, path: str, size: int
) -> None:
    settings.SYSPROMPT = {"ALLOWED_ROOTS": [str(fuzz_root)], "MAX_TEMPLATE_BYTES": 8}
    method = "PUT" if path == TEMPLATE else "POST"

    response = _call(path, method, auth, body={"template": "x" * size, "cwd": str(fuzz_root)})

    assert response.status_code == 413
    assert "the limit is" in response.json()["detail"]


def test_put_answers_415_when_the_body_is_not_json(auth: dict[str, str]) -> None:
    response = _call(TEMPLATE, "PUT", auth, body="template", media_type="text/plain")

    assert response.status_code == 415


@pytest.mark.parametrize(
    ("path", "method", "arguments"),
    [
        (CONVERSATION, "GET", {"path_parameters": {"conversation_id": "never"}}),
        (CONVERSATION, "DELETE", {"path_parameters": {"conversation_id": "never"}}),
        (VERSIONS, "GET", {"query": {"cursor": "not-a-cursor"}}),
        (CONVERSATIONS, "GET", {"query": {"cursor": "not-a-cursor"}}),
    ],
)
def test_answers_404_when_there_is_nothing_there(
    auth: dict[str, str], path: str, method: str, arguments: dict[str, Any]
) -> None:
    response = _call(path, method, auth, **arguments)

    assert response.status_code == 404


def test_answers_503_when_the_database_is_unreachable(auth: dict[str, str]) -> None:
    gone = OperationalError("connection refused")
    with mock.patch.object(selectors, "template_current", side_effect=gone):
        response = _call(TEMPLATE, "GET", auth, expect_server_error=True)

    assert response.status_code == 503
    assert response.headers["retry-after"] == ["5"]


# The library's operations, explicit cases sent and checked as the fuzzer's are


def test_fragment_put_answers_201_then_412_with_the_current_etag(auth: dict[str, str]) -> None:
    name = {"name": "env/git"}
    created = _call(FRAGMENT, "PUT", auth, path_parameters=name, body={"text": "one"})
    stale = created.headers["etag"][0]
    _call(FRAGMENT, "PUT", auth, path_parameters=name, body={"text": "two"})

    response = _call(
        FRAGMENT, "PUT", {**auth, "If-Match": stale}, path_parameters=name, body={"text": "x"}
    )

    assert created.status_code == 201
    assert response.status_code == 412
    assert (
        response.headers["etag"]
        == _call(FRAGMENT, "GET", auth, path_parameters=name).headers["etag"]
    )


@pytest.mark.parametrize(("path", "method"), [(FRAGMENT, "GET"), (FRAGMENT_VERSIONS, "GET")])
@pytest.mark.parametrize(("name", "status"), [("Bad Name", 400), ("missing", 404)])
def test_fragment_answers_documented_errors_when_the_name_is_wrong(
    auth: dict[str, str], path: str, method: str, name: str, status: int
) -> None:
    response = _call(path, method, auth, path_parameters={"name": name})

    assert response.status_code == status


def test_library_list_and_versions_answer_the_documented_page(auth: dict[str, str]) -> None:
    for index in range(3):
        _call(FRAGMENT, "PUT", auth, path_parameters={"name": "zz"}, body={"text": f"v{index}"})
        _call(FRAGMENT, "PUT", auth, path_parameters={"name": f"zz/{index}"}, body={"text": "x"})

    listed = _call(LIBRARY, "GET", auth, query={"search": "zz", "page_size": "2"})
    versions = _call(FRAGMENT_VERSIONS, "GET", auth, path_parameters={"name": "zz"})

    assert [f["name"] for f in listed.json()["results"]] == ["zz", "zz/0"]
    assert [v["version"] for v in versions.json()["results"]] == [3, 2, 1]


def test_library_preview_answers_the_documented_preview(
    auth: dict[str, str], fuzz_root: Path
) -> None:
    _call(FRAGMENT, "PUT", auth, path_parameters={"name": "core"}, body={"text": "## Core"})
    _call(
        FRAGMENT,
        "PUT",
        auth,
        path_parameters={"name": "core"},
        query={"provider": "openai"},
        body={"text": "##   Open", "compress": True},
    )

    response = _call(
        LIBRARY_PREVIEW,
        "POST",
        auth,
        body={"cwd": str(fuzz_root), "fragment": "core", "provider": "OpenAI"},
    )

    assert response.json()["system_prompt"] == "# Open"
    assert response.json()["compression"]["chars_after"] == len("# Open")


def test_export_and_import_answer_the_documented_bodies(auth: dict[str, str]) -> None:
    exported = _call(EXPORT, "GET", auth)
    dry = _call(
        IMPORT,
        "POST",
        auth,
        query={"dry_run": "1"},
        body=VALID_ZIP,
        media_type="application/zip",
    )
    refused = _call(
        IMPORT, "POST", auth, body=zip_of({"Bad Name.md": "x"}), media_type="application/zip"
    )

    assert exported.status_code == 200
    assert dry.status_code == 200
    assert refused.status_code == 400
    assert refused.json()["applied"] is False


@pytest.mark.parametrize(
    ("media_type", "body"), [("application/json", {"core.md": "x"}), ("text/plain", "x")]
)
def test_import_answers_415_when_the_body_is_not_a_zip(
    auth: dict[str, str], media_type: str, body: object
) -> None:
    response = _call(IMPORT, "POST", auth, body=body, media_type=media_type)

    assert response.status_code == 415


def test_import_answers_413_when_the_archive_is_over_the_limit(
    auth: dict[str, str], settings: Settings
) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 8}

    response = _call(
        IMPORT, "POST", auth, body=zip_of({"a.md": "a" * 2000}), media_type="application/zip"
    )

    assert response.status_code == 413


def test_host_override_answers_200_403_and_404_when_called(
    auth: dict[str, str], in_process_requests: None
) -> None:
    host = agent_host_ensure(name="host-1")
    own = {"Authorization": f"Token {host.token}"}
    path = {"username": "host-1"}

    saved = _call(HOST_OVERRIDE, "PUT", auth, path_parameters=path, body={"override": "x"})
    refused = _call(HOST_OVERRIDE, "GET", own, path_parameters=path)
    missing = _call(HOST_OVERRIDE, "GET", auth, path_parameters={"username": "nobody"})
    invalid = _call(
        HOST_OVERRIDE,
        "PUT",
        auth,
        path_parameters=path,
        body={"override": {"content": "x", "strategy": "replace"}},
    )

    assert (saved.status_code, refused.status_code) == (200, 403)
    assert (missing.status_code, invalid.status_code) == (404, 400)


# The schema itself


def _documented() -> dict[tuple[str, str], set[int]]:
    paths: dict[str, dict[str, Any]] = schema.raw_schema["paths"]
    return {
        (path, method.upper()): {int(code) for code in operation["responses"]}
        for path, operations in paths.items()
        for method, operation in operations.items()
    }


def test_schema_documents_every_endpoint_of_the_contract() -> None:
    documented = set(_documented())

    assert set(OPERATIONS) <= documented
    assert documented - set(OPERATIONS) == set(NOT_IN_THE_CONTRACT)


@pytest.mark.parametrize(("path", "method"), [*OPERATIONS, *NOT_IN_THE_CONTRACT])
def test_schema_documents_every_status_the_operation_answers(path: str, method: str) -> None:
    answers = {**OPERATIONS, **NOT_IN_THE_CONTRACT}[path, method]

    assert answers <= _documented()[path, method]


def test_schema_generates_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "s.yml"))


def test_schema_endpoint_answers_401_when_no_credentials(client: Client, db: None) -> None:
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 401
    assert json.loads(response.content) == {
        "detail": "Authentication credentials were not provided."
    }


def test_schema_endpoint_serves_the_fuzzed_schema_when_a_token_is_given(
    auth: dict[str, str],
) -> None:
    response = Client(headers=auth).get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    assert json.loads(response.content) == schema.raw_schema


def test_docs_redirect_to_login_when_not_logged_in(client: Client, db: None) -> None:
    response = client.get("/api/docs/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/api/docs/"


def test_docs_use_only_local_assets_when_logged_in(client: Client, superuser: User) -> None:
    client.force_login(superuser)

    response = client.get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert not re.search(r"https?://", html), "the docs page must not load from a CDN"
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui-bundle" in url for url in assets)
    # The page's own start-up script is served by the docs view (no inline script, so
    # the Content-Security-Policy needs no exception); it points at the schema.
    scripts = [url for url in assets if url.startswith("/api/docs/?script")]
    assert len(scripts) == 1
    script = client.get(scripts[0].replace("&amp;", "&"))
    assert script.status_code == 200
    assert "/api/schema/" in script.content.decode()
    for url in assets:
        if url in scripts:
            continue
        assert url.startswith("/static/"), url
        asset = client.get(url)
        asset.close()
        assert asset.status_code == 200, url


@pytest.mark.parametrize(
    ("path", "credentials", "status"),
    [
        # The schema is a DRF view (SERVE_PERMISSIONS: IsAuthenticated): any API credential.
        ("/api/schema/", None, 401),
        ("/api/schema/", "Token", 200),
        ("/api/schema/", "Bearer", 200),
        ("/api/schema/", "session", 200),
        # The docs page is a Django view behind login_required: only the login session.
        ("/api/docs/", None, 302),
        ("/api/docs/", "Token", 302),
        ("/api/docs/", "Bearer", 302),
        ("/api/docs/", "session", 200),
    ],
)
def test_schema_and_docs_answer_per_credentials_when_requested(
    superuser: User, path: str, credentials: str | None, status: int
) -> None:
    client = Client()
    if credentials == "session":
        client.force_login(superuser)
    elif credentials is not None:
        key = Token.objects.create(user=superuser).key
        client = Client(headers={"Authorization": f"{credentials} {key}"})

    response = client.get(path, {"format": "json"} if path == "/api/schema/" else {})

    assert response.status_code == status
    if status == 302:
        assert response["Location"] == "/accounts/login/?next=/api/docs/"


# What a generated client is made from: a rename here is a rename in every client.

OPERATION_IDS = {
    (TEMPLATE, "GET"): "get_template",
    (TEMPLATE, "PUT"): "save_template",
    (VARIABLES, "GET"): "list_template_variables",
    (VERSIONS, "GET"): "list_template_versions",
    (PREVIEW, "POST"): "preview_template",
    (CONVERSATIONS, "GET"): "list_conversations",
    (CONVERSATION, "GET"): "get_conversation_prompt",
    (CONVERSATION, "DELETE"): "delete_conversation_prompt",
    (CONVERSATION + "/resolve", "POST"): "resolve",
    (CONVERSATION + "/construct", "POST"): "construct",
    (CONVERSATION + "/compact", "POST"): "compact",
    (HEALTH, "GET"): "health",
    (ME, "GET"): "get_caller",
    (LIBRARY, "GET"): "list_library",
    (FRAGMENT, "GET"): "get_fragment_variant",
    (FRAGMENT, "PUT"): "save_fragment_variant",
    (FRAGMENT, "DELETE"): "delete_fragment_variant",
    (FRAGMENT_VERSIONS, "GET"): "list_fragment_versions",
    (LIBRARY_PREVIEW, "POST"): "preview_library",
    (EXPORT, "GET"): "export_library",
    (IMPORT, "POST"): "import_library",
    (HOST_OVERRIDE, "GET"): "get_agent_host_override",
    (HOST_OVERRIDE, "PUT"): "set_agent_host_override",
    (REFERENCES, "GET"): "list_template_references",
    (WEBHOOKS, "GET"): "list_webhooks",
    (WEBHOOKS, "POST"): "create_webhook",
    (WEBHOOK, "GET"): "get_webhook",
    (WEBHOOK, "PUT"): "update_webhook",
    (WEBHOOK, "DELETE"): "delete_webhook",
    (WEBHOOK_DELIVERIES, "GET"): "list_webhook_deliveries",
    (WEBHOOK_TEST, "POST"): "test_webhook",
    (AUDIT, "GET"): "list_audit",
    (RELEASES, "GET"): "list_releases",
    (RELEASES, "POST"): "create_release",
    (RELEASE, "GET"): "get_release",
    (RELEASE_COMPARE, "GET"): "compare_release",
    (IMPACT, "POST"): "release_impact",
    (LABELS, "GET"): "list_labels",
    (LABEL, "GET"): "get_label",
    (LABEL, "PUT"): "set_label",
    (LABEL_HISTORY, "GET"): "list_label_moves",
    (LABEL_ROLLBACK, "POST"): "rollback_label",
    (TEST_CONTEXTS, "GET"): "list_test_contexts",
    (TEST_CONTEXTS, "POST"): "create_test_context",
    (TEST_CONTEXT, "GET"): "get_test_context",
    (TEST_CONTEXT, "PUT"): "save_test_context",
    (TEST_CONTEXT, "DELETE"): "delete_test_context",
    (HOST_LABEL, "GET"): "get_agent_host_label",
    (HOST_LABEL, "PUT"): "set_agent_host_label",
    (PROMPT_RELEASES, "GET"): "prompt_list_releases",
    (PROMPT_RELEASES, "POST"): "prompt_create_release",
    (PROMPT_RELEASE, "GET"): "prompt_get_release",
    (PROMPT_RELEASE_COMPARE, "GET"): "prompt_compare_release",
    (PROMPT_IMPACT, "POST"): "prompt_release_impact",
    (PROMPT_LABELS, "GET"): "prompt_list_labels",
    (PROMPT_LABEL, "GET"): "prompt_get_label",
    (PROMPT_LABEL, "PUT"): "prompt_set_label",
    (PROMPT_LABEL_HISTORY, "GET"): "prompt_list_label_moves",
    (PROMPT_LABEL_ROLLBACK, "POST"): "prompt_rollback_label",
    (PROMPT_TEST_CONTEXTS, "GET"): "prompt_list_test_contexts",
    (PROMPT_TEST_CONTEXTS, "POST"): "prompt_create_test_context",
    (PROMPT_TEST_CONTEXT, "GET"): "prompt_get_test_context",
    (PROMPT_TEST_CONTEXT, "PUT"): "prompt_save_test_context",
    (PROMPT_TEST_CONTEXT, "DELETE"): "prompt_delete_test_context",
    (FRAGMENT_IMPACT, "POST"): "fragment_impact",
    # evaluations §5
    (MODELS, "GET"): "list_models",
    (SUITES, "GET"): "list_suites",
    (SUITES, "POST"): "create_suite",
    (SUITE, "GET"): "get_suite",
    (SUITE, "PUT"): "update_suite",
    (SUITE, "DELETE"): "delete_suite",
    (CASES, "GET"): "list_cases",
    (CASES, "POST"): "create_case",
    (CASE, "GET"): "get_case",
    (CASE, "PUT"): "update_case",
    (CASE, "DELETE"): "delete_case",
    (SUITE_IMPORT, "POST"): "import_cases",
    (SUITE_EXPORT, "GET"): "export_cases",
    (PROMPT_SUITES, "GET"): "prompt_list_suites",
    (PROMPT_SUITES, "POST"): "prompt_create_suite",
    (PROMPT_SUITE, "GET"): "prompt_get_suite",
    (PROMPT_SUITE, "PUT"): "prompt_update_suite",
    (PROMPT_SUITE, "DELETE"): "prompt_delete_suite",
    (PROMPT_CASES, "GET"): "prompt_list_cases",
    (PROMPT_CASES, "POST"): "prompt_create_case",
    (PROMPT_CASE, "GET"): "prompt_get_case",
    (PROMPT_CASE, "PUT"): "prompt_update_case",
    (PROMPT_CASE, "DELETE"): "prompt_delete_case",
    (PROMPT_SUITE_IMPORT, "POST"): "prompt_import_cases",
    (PROMPT_SUITE_EXPORT, "GET"): "prompt_export_cases",
    (EVALUATIONS, "GET"): "list_evaluations",
    (EVALUATIONS, "POST"): "start_evaluation",
    (EVALUATION_PLAN, "POST"): "plan_evaluation",
    (EVALUATION, "GET"): "get_evaluation",
    (EVALUATION_RESULTS, "GET"): "get_evaluation_results",
    (EVALUATION_CANCEL, "POST"): "cancel_evaluation",
    (PROMPTS, "GET"): "list_prompts",
    (PROMPTS, "POST"): "create_prompt",
    (PROMPT, "GET"): "get_prompt",
    (PROMPT, "PATCH"): "update_prompt",
    (PROMPT, "DELETE"): "delete_prompt",
    (PROMPT_RENAME, "POST"): "rename_prompt",
    (PROMPT_ARCHIVE, "POST"): "archive_prompt",
    (PROMPT_UNARCHIVE, "POST"): "unarchive_prompt",
    (PROMPT_DUPLICATE, "POST"): "duplicate_prompt",
    (FOLDER, "GET"): "get_folder",
    (FOLDER, "PUT"): "set_folder",
    # named prompts: the same operations under a prompt's or an agent host's path
    (PROMPT_TEMPLATE, "GET"): "prompt_get_template",
    (PROMPT_TEMPLATE, "PUT"): "prompt_save_template",
    (PROMPT_TEMPLATE + "/variables", "GET"): "prompt_list_template_variables",
    (PROMPT_TEMPLATE + "/versions", "GET"): "prompt_list_template_versions",
    (PROMPT_TEMPLATE + "/preview", "POST"): "prompt_preview_template",
    (PROMPT_TEMPLATE + "/references", "GET"): "prompt_list_template_references",
    (HOST_CONVERSATION, "GET"): "host_get_conversation_prompt",
    (HOST_CONVERSATION, "DELETE"): "host_delete_conversation_prompt",
    (HOST_CONVERSATION + "/resolve", "POST"): "host_resolve",
    (HOST_CONVERSATION + "/construct", "POST"): "host_construct",
    (HOST_CONVERSATION + "/compact", "POST"): "host_compact",
    (HOST_PROMPTS, "GET"): "get_agent_host_prompts",
    (HOST_PROMPTS, "PUT"): "set_agent_host_prompts",
}
COMPONENTS = {
    # named prompts: the catalog
    "Prompt",
    "PromptListItem",
    "PromptPage",
    "PromptCreateInput",
    "PatchedPromptUpdateInput",  # PATCH: every field optional
    "PromptRenameInput",
    "PromptDuplicateInput",
    "Folder",
    "FolderInput",
    "BadRequest",  # oneOf FieldErrors, Error
    "Caller",  # GET /api/me
    "CallerPermissions",
    "CompactedConversationPrompt",
    "ConstructedConversationPrompt",
    "ContextKeptEnum",  # what a construct or compact kept of the frozen context
    "ConversationInput",
    "ConversationPage",
    "ConversationPrompt",
    "ConversationSummary",
    "Diagnostic",
    "Error",
    "FieldErrors",
    "Health",
    "Preview",
    "PreviewInput",
    "Severity",
    "Template",
    "TemplateInput",
    "TemplateVersion",
    "TemplateVersionPage",
    "Variable",
    "VariableCatalog",
    # the host context and the library
    "ResolveInput",
    "ResolvedConversationPrompt",
    "Override",  # oneOf a string, OverrideText, OverridePreset
    "OverrideText",
    "OverridePreset",
    "FragmentUse",
    "Fragment",
    "FragmentVariant",
    "FragmentVariantInput",
    "FragmentVariantSummary",
    "FragmentVersion",
    "FragmentVersionPage",
    "LibraryPage",
    "LibraryPreview",
    "LibraryPreviewInput",
    "Compression",
    "ImportItem",
    "ImportReport",
    "ImportRefused",  # oneOf ImportReport, FieldErrors, Error
    "ImportTarget",
    "HostOverride",
    "HostOverrideInput",
    "ActionEnum",  # an import item's action
    "SourceEnum",  # who wrote a fragment version
    "StrategyEnum",  # append or prepend
    # agent hosts: host-local values, the references, the shared prefix
    "HostValues",
    "TemplateReferences",
    "PromptsReferences",  # ?prompt=a&prompt=b: each prompt's references
    "ReferencesAnswer",  # oneOf TemplateReferences, PromptsReferences
    "HostPrompts",  # an agent host's default prompt and allowed prompts
    "HostPromptsInput",
    "HostResolvesEnum",  # file, git, system
    "SharedPrefixEnd",
    # events: webhooks, their delivery log, the audit log
    "Webhook",
    "WebhookInput",
    "WebhookUpdateInput",
    "WebhookCreated",
    "WebhookDelivery",
    "WebhookDeliveryPage",
    "WebhookTest",
    "AuditRecord",
    "AuditPage",
    "EventType",  # what a subscription may ask for
    "SentEventType",  # what a delivery sent: those and ping
    # releases §5: every part of a target and a pointer is a named component
    "Release",
    "ReleaseDetail",
    "ReleaseInput",
    "ReleasePage",
    "ReleaseComparison",
    "TemplateChange",
    "VariantChange",
    "Target",
    "LatestTarget",
    "ReleaseTarget",
    "SplitTarget",
    "SplitArm",
    "Pointer",
    "Candidate",  # a Pointer or a ReleaseTarget: an impact's candidate
    "ReleaseNumber",
    "Label",
    "LabelDetail",  # a label with rollback_to (get, set, rollback)
    "GateRefused",  # a 409 of a gated label's move: detail and reasons
    "LabelInput",
    "LabelPage",
    "LabelMove",
    "LabelMovePage",
    "RollbackInput",
    "Impact",
    "ImpactInput",
    "ImpactSummary",
    "ImpactContext",
    "OriginEnum",  # recorded or test
    "ContextMismatchEnum",  # cwd, model or provider
    "HostValuesEnum",  # server or supplied
    "TestContext",
    "TestContextInput",
    "TestContextCreateInput",
    "TestContextPage",
    "HostLabel",
    "HostLabelInput",
    # named prompts §2: a fragment's users and the impact of a change of its text
    "FragmentVariantDetail",
    "FragmentImpact",
    "FragmentImpactInput",
    "FragmentImpactLabel",
    "FragmentImpactPrompt",
    # evaluations §5
    "Model",
    "ModelList",
    "Suite",
    "SuiteInput",
    "SuiteUpdateInput",
    "SuitePage",
    "Case",
    "CaseInput",
    "CaseUpdateInput",
    "CasePage",
    "CasesImported",
    "Evaluation",
    "EvaluationInput",
    "EvaluationPage",
    "EvaluationStarted",
    "EvaluationPlan",
    "EvaluationLimits",
    "EvaluationResultPage",
    "Progress",
    "CaseResult",
    "SideResult",
    "CheckResult",
    "TokenCounts",
}


def _operations() -> dict[tuple[str, str], dict[str, Any]]:
    paths: dict[str, dict[str, Any]] = schema.raw_schema["paths"]
    return {
        (path, method.upper()): operation
        for path, operations in paths.items()
        for method, operation in operations.items()
    }


def test_schema_names_operations_when_generated() -> None:
    ids = {key: operation["operationId"] for key, operation in _operations().items()}

    assert ids == OPERATION_IDS


def test_schema_names_components_when_generated() -> None:
    assert set(schema.raw_schema["components"]["schemas"]) == COMPONENTS


def test_schema_has_one_field_errors_component_when_generated() -> None:
    components: dict[str, dict[str, Any]] = schema.raw_schema["components"]["schemas"]
    messages = {"type": "array", "items": {"type": "string"}}

    field_errors = [
        name for name, part in components.items() if part.get("additionalProperties") == messages
    ]

    assert field_errors == ["FieldErrors"]
    assert components["BadRequest"]["oneOf"] == [
        {"$ref": "#/components/schemas/FieldErrors"},
        {"$ref": "#/components/schemas/Error"},
    ]
    assert "additionalProperties" not in json.dumps(schema.raw_schema["paths"])


@pytest.mark.parametrize(("key", "operation"), list(_operations().items()))
def test_schema_refers_to_the_error_components_when_an_operation_fails(
    key: tuple[str, str], operation: dict[str, Any]
) -> None:
    for code, response in operation["responses"].items():
        if int(code) < 400:
            continue
        component = "BadRequest" if code == "400" else "Error"
        if key == (IMPORT, "POST") and code == "400":
            component = "ImportRefused"  # the report of what was refused
        if key[0].startswith(("/api/labels/", f"{PER_PROMPT}/labels/")) and code == "409":
            component = "GateRefused"  # what the label's gate is missing, one by one
        assert response["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{component}"
        }, (key, code)


def _parameter(path: str, method: str, name: str) -> dict[str, Any]:
    parameters = _operations()[path, method].get("parameters", [])
    [found] = [parameter for parameter in parameters if parameter["name"] == name]
    return dict(found["schema"])


def _property(component: str, name: str) -> dict[str, Any]:
    return dict(schema.raw_schema["components"]["schemas"][component]["properties"][name])


@pytest.mark.parametrize(
    ("found", "constraints"),
    [
        (lambda: _parameter(TEMPLATE, "PUT", "If-Match"), {"type": "string", "minLength": 1}),
        (
            lambda: _property("ConversationInput", "cwd"),
            {"type": "string", "pattern": "^/", "maxLength": CWD_MAX_LENGTH},
        ),
        (
            lambda: _property("PreviewInput", "cwd"),
            {"type": "string", "pattern": "^/", "maxLength": CWD_MAX_LENGTH},
        ),
        (lambda: _property("PreviewInput", "conversation_id"), {"minLength": 1}),
    ],
    ids=["If-Match", "ConversationInput.cwd", "PreviewInput.cwd", "PreviewInput.conversation_id"],
)
def test_schema_constrains_inputs_when_they_are_validated(
    found: Any, constraints: dict[str, Any]
) -> None:
    described = found()

    assert constraints.items() <= described.items()
