"""Every API error is JSON in the documented shape, never an HTML page or a traceback.

Each case is an attack a client can send (or a failure the server can have) and the
answer it must get. The failing views below are real views in a test URLconf that also
mounts the whole app: nothing is mocked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from pytest_django import Settings
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from config.urls import urlpatterns as app_urlpatterns
from sysprompt.api.parsers import max_body_bytes
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

PREVIEW = "/api/system-prompt/preview"
FAILURE_MESSAGE = "an unexpected failure nobody planned for"


class FailingApi(APIView):
    """An API view with a bug."""

    def get(self, request: Request) -> Response:
        raise RuntimeError(FAILURE_MESSAGE)


def failing_plain_view(request: HttpRequest) -> HttpResponse:
    """A plain Django view under /api/ with a bug (not DRF: no exception handler)."""
    raise RuntimeError(FAILURE_MESSAGE)


urlpatterns = [
    path("api/test-failing", FailingApi.as_view()),
    path("api/test-failing-plain", failing_plain_view),
    *app_urlpatterns,
]


def assert_json_detail(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert isinstance(body, dict)
    assert b"Traceback" not in response.content
    assert b"<html" not in response.content.lower()
    return body


def post_json(client: Client, url: str, body: str | bytes) -> Any:
    return client.generic("POST", url, body, content_type="application/json")


# --- bodies too large -----------------------------------------------------------------


def test_api_body_over_parser_limit_answers_413_json(author_client: APIClient) -> None:
    body = json.dumps({"template": "x" * (max_body_bytes() + 1), "cwd": "/"})

    response = post_json(author_client, PREVIEW, body)

    assert list(assert_json_detail(response, 413)) == ["detail"]


def test_api_body_over_data_upload_max_memory_size_answers_413_json(
    author_client: APIClient, settings: Settings
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000  # below the parser's own limit
    body = json.dumps({"template": "x" * 200_000, "cwd": "/"})
    assert len(body) < max_body_bytes()

    response = post_json(author_client, PREVIEW, body)

    body_json = assert_json_detail(response, 413)
    assert list(body_json) == ["detail"]
    assert "100,000" in body_json["detail"]


def test_api_form_body_over_data_upload_max_memory_size_answers_415_json(
    author: User, settings: Settings
) -> None:
    """A session (browser) client whose CSRF check reads the form: DRF has no form
    parser, so the body is refused as a media type before anything reads it."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    client = Client(enforce_csrf_checks=True)
    client.force_login(author)
    client.get("/accounts/login/")  # sets the CSRF cookie
    csrf_token = client.cookies["csrftoken"].value

    response = client.post(
        PREVIEW,
        "template=" + "x" * 5_000,
        content_type="application/x-www-form-urlencoded",
        headers={"X-CSRFToken": csrf_token},
    )

    assert list(assert_json_detail(response, 415)) == ["detail"]


# --- malformed bodies -------------------------------------------------------------------

DEEP_BODIES = {
    "arrays": "[" * 100_000,
    "objects": '{"a":' * 100_000,
    "in a field": '{"template": ' + "[" * 100_000,
    "closed arrays": "[" * 50_000 + "]" * 50_000,
}


@pytest.mark.parametrize("body", DEEP_BODIES.values(), ids=DEEP_BODIES.keys())
def test_api_json_nested_too_deep_answers_400_json(author_client: APIClient, body: str) -> None:
    response = post_json(author_client, PREVIEW, body)

    assert list(assert_json_detail(response, 400)) == ["detail"]


def test_api_json_invalid_answers_400_json(author_client: APIClient) -> None:
    response = post_json(author_client, PREVIEW, b'{"template": "\xff')

    assert list(assert_json_detail(response, 400)) == ["detail"]


# --- routes and methods -------------------------------------------------------------------

UNKNOWN_PATHS = [
    "/api/",
    "/api/nope",
    "/api/system-prompt/",
    "/api/system-prompt/unknown",
    "/api/conversations/c1/system-prompt/unknown",
    "/api/health/",
]


@pytest.mark.parametrize("url", UNKNOWN_PATHS)
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_api_unknown_path_answers_404_json(author_client: APIClient, url: str, method: str) -> None:
    response = author_client.generic(method, url)

    assert list(assert_json_detail(response, 404)) == ["detail"]


def test_api_unknown_path_anonymous_answers_404_json(client: Client) -> None:
    response = client.get("/api/nope")

    assert list(assert_json_detail(response, 404)) == ["detail"]


WRONG_METHODS = [
    ("PATCH", "/api/system-prompt"),
    ("POST", "/api/system-prompt/variables"),
    ("GET", "/api/system-prompt/preview"),
    ("GET", "/api/conversations/c1/system-prompt/resolve"),
    ("PUT", "/api/conversations"),
    ("POST", "/api/health"),
]


@pytest.mark.parametrize(("method", "url"), WRONG_METHODS)
def test_api_wrong_method_answers_405_json(author_client: APIClient, method: str, url: str) -> None:
    response = author_client.generic(method, url)

    body = assert_json_detail(response, 405)
    assert list(body) == ["detail"]
    assert response["Allow"]


# --- unexpected failures ----------------------------------------------------------------


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("url", ["/api/test-failing", "/api/test-failing-plain"])
def test_api_unexpected_exception_answers_500_json_and_logs_traceback(
    author: User, capfd: pytest.CaptureFixture[str], url: str
) -> None:
    client = token_client(author)
    client.raise_request_exception = False  # answer as a server does, not re-raise

    response = client.get(url)

    body = assert_json_detail(response, 500)
    assert list(body) == ["detail"]
    assert FAILURE_MESSAGE not in response.content.decode()
    err = capfd.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert f"RuntimeError: {FAILURE_MESSAGE}" in err
    assert url in err
    assert err.count(f"Internal Server Error: {url}") == 1  # logged once
