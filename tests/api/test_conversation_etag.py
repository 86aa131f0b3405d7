"""GET /api/conversations/{id}/system-prompt answers ``ETag: "<sha256>"`` and honours
If-None-Match with 304 (agent-hosts.md §1): a client revalidates a kept prompt for the
cost of a header. Real API and database; the last test is ``sysprompt_client``'s own
background revalidation against the live server.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from pytest_django.live_server_helper import LiveServer
from rest_framework.test import APIClient

from sysprompt.accounts.services import agent_host_ensure
from sysprompt.api.views import EMPTY_SHA256, conversation_etag
from sysprompt.prompts.models import ConversationPrompt
from sysprompt_client import Client
from tests.conftest import token_client

pytestmark = pytest.mark.django_db

CONVERSATION = "/api/conversations/{}/system-prompt"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve(client: APIClient, cwd: Path, cid: str = "c1", **body: Any) -> Any:
    response = client.post(
        CONVERSATION.format(cid) + "/resolve", {"cwd": str(cwd), **body}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    return response


def get(client: APIClient, cid: str = "c1", **headers: str) -> Any:
    return client.get(CONVERSATION.format(cid), headers=headers)


def test_get_answers_the_quoted_sha256_as_a_strong_etag(
    agent_client: APIClient, workdir: Path
) -> None:
    stored = resolve(agent_client, workdir).json()

    response = get(agent_client)

    assert response.status_code == 200
    assert response["ETag"] == f'"{stored["sha256"]}"'
    assert stored["sha256"] == sha256(stored["system_prompt"])
    assert response.json() == stored  # every field, as before


@pytest.mark.parametrize("header", ["{etag}", "W/{etag}", '"stale", {etag}', "*"])
def test_if_none_match_naming_the_stored_prompt_answers_304_without_a_body(
    agent_client: APIClient, workdir: Path, header: str
) -> None:
    resolve(agent_client, workdir)
    etag = get(agent_client)["ETag"]

    response = get(agent_client, **{"If-None-Match": header.format(etag=etag)})

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag
    assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize("header", ['"stale"', 'W/"stale"', "no entity tag", ""])
def test_if_none_match_naming_another_prompt_answers_200_with_the_prompt(
    agent_client: APIClient, workdir: Path, header: str
) -> None:
    stored = resolve(agent_client, workdir).json()

    response = get(agent_client, **{"If-None-Match": header})

    assert response.status_code == 200
    assert response.json() == stored


def test_a_prompt_constructed_again_answers_200_with_its_new_etag(
    agent_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    resolve(agent_client, workdir)
    old = get(agent_client)["ETag"]
    author_client.put("/api/system-prompt", {"template": "New rules."}, format="json")
    agent_client.post(
        CONVERSATION.format("c1") + "/construct", {"cwd": str(workdir)}, format="json"
    )

    response = get(agent_client, **{"If-None-Match": old})

    assert response.status_code == 200
    assert response.json()["system_prompt"] == "New rules."
    assert response["ETag"] == f'"{sha256("New rules.")}"' != old
    assert get(agent_client, **{"If-None-Match": response["ETag"]}).status_code == 304


def test_a_null_prompt_has_the_etag_of_no_bytes(
    agent_client: APIClient, author_client: APIClient, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": " \n"}, format="json")
    resolve(agent_client, workdir)

    response = get(agent_client)

    assert response.json()["system_prompt"] is None
    assert response["ETag"] == f'"{EMPTY_SHA256}"' == f'"{sha256("")}"'
    assert get(agent_client, **{"If-None-Match": response["ETag"]}).status_code == 304


def test_the_etag_of_a_stored_row_is_its_sha256(agent_client: APIClient, workdir: Path) -> None:
    resolve(agent_client, workdir)

    row = ConversationPrompt.objects.get()

    assert conversation_etag(row) == f'"{row.sha256}"'


def test_if_none_match_never_turns_a_404_into_a_304(
    agent_client: APIClient, workdir: Path, author: Any
) -> None:
    resolve(agent_client, workdir)
    other = token_client(User.objects.create_user("other-host"))

    missing = get(agent_client, "nothing-here", **{"If-None-Match": "*"})
    someone_elses = get(other, "c1", **{"If-None-Match": "*"})
    invalid = get(agent_client, "bad id", **{"If-None-Match": "*"})

    assert (missing.status_code, someone_elses.status_code) == (404, 404)
    assert invalid.status_code == 400


def test_head_answers_the_etag_and_304_too(agent_client: APIClient, workdir: Path) -> None:
    resolve(agent_client, workdir)
    etag = get(agent_client)["ETag"]

    head = agent_client.head(CONVERSATION.format("c1"))
    revalidated = agent_client.head(CONVERSATION.format("c1"), headers={"If-None-Match": etag})

    assert (head.status_code, head["ETag"]) == (200, etag)
    assert revalidated.status_code == 304


class Answers(httpx.BaseTransport):
    """httpx's real transport, recording each request's If-None-Match and its status."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.seen: list[tuple[str, str, str | None, int]] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        with self.lock:
            self.seen.append(
                (
                    request.method,
                    request.url.path,
                    request.headers.get("if-none-match"),
                    response.status_code,
                )
            )
        return response

    def close(self) -> None:
        self.inner.close()


@pytest.mark.django_db(transaction=True)
def test_the_clients_background_revalidation_is_answered_304(
    live_server: LiveServer, workdir: Path
) -> None:
    host = agent_host_ensure(name="etag-host")
    answers = Answers()
    with Client(live_server.url, host.token, transport=answers, max_age=0.0) as client:
        first = client.system_prompt("c-live", cwd=str(workdir))
        again = client.system_prompt("c-live", cwd=str(workdir))  # stale at once

    path = CONVERSATION.format("c-live")
    assert (again.from_cache, again.text) == (True, first.text)
    assert ("GET", path, f'"{first.sha256}"', 304) in answers.seen
