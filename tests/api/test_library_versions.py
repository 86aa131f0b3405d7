"""GET /api/library/fragments/{name}/versions, and which route a path ending in
``/versions`` takes."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import call, fragment_url, put_fragment

pytestmark = pytest.mark.django_db


def test_versions_list_newest_first_with_deletions(
    author_client: APIClient, agent_client: APIClient
) -> None:
    for text in ("one", "two", "three"):
        put_fragment(author_client, "core", text)
    author_client.delete(fragment_url("core"))

    response = agent_client.get(fragment_url("core", "/versions"))

    assert response.status_code == 200
    results = response.json()["results"]
    assert [v["version"] for v in results] == [4, 3, 2, 1]
    assert [v["deleted"] for v in results] == [True, False, False, False]
    assert [v["text"] for v in results] == ["three", "three", "two", "one"]
    assert set(results[0]) == {
        "version",
        "text",
        "compress",
        "defaults",
        "strategy",
        "source",
        "deleted",
        "author",
        "created_at",
    }
    assert results[0]["author"] == "author"


def test_versions_paginated_with_cursor(author_client: APIClient) -> None:
    for number in range(1, 6):
        put_fragment(author_client, "core", f"v{number}")

    page = author_client.get(fragment_url("core", "/versions", page_size="2")).json()
    second = author_client.get(page["next"]).json()
    back = author_client.get(second["previous"]).json()

    assert [v["version"] for v in page["results"]] == [5, 4]
    assert [v["version"] for v in second["results"]] == [3, 2]
    assert back["results"] == page["results"]
    assert page["previous"] is None


def test_versions_of_one_variant_only(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "default")
    put_fragment(author_client, "core", "claude 1", query={"provider": "Anthropic"})
    put_fragment(author_client, "core", "claude 2", query={"provider": "anthropic"})

    results = author_client.get(fragment_url("core", "/versions", provider="ANTHROPIC")).json()[
        "results"
    ]

    assert [v["text"] for v in results] == ["claude 2", "claude 1"]


@pytest.mark.parametrize(
    ("url", "status"),
    [
        (fragment_url("nope", "/versions"), 404),
        (fragment_url("core", "/versions", provider="openai"), 404),
        (fragment_url("core", "/versions", cursor="garbage"), 404),
        (fragment_url("core", "/versions", page_size="0"), 400),
        (fragment_url("Core", "/versions"), 400),
        (fragment_url("", "/versions"), 400),
        (fragment_url("core", "/versions", model="m"), 400),
    ],
)
def test_versions_answer_errors_when_asked_wrongly(
    author_client: APIClient, url: str, status: int
) -> None:
    put_fragment(author_client, "core", "one")

    assert author_client.get(url).status_code == status


def test_versions_suffix_is_the_list_and_dash_reaches_the_fragment(
    author_client: APIClient,
) -> None:
    put_fragment(author_client, "tools", "the tools fragment")

    created = put_fragment(author_client, "tools/versions/-", "named versions")
    listed = author_client.get(fragment_url("tools/versions"))
    own_versions = author_client.get(fragment_url("tools/versions", "/versions"))
    itself = author_client.get(fragment_url("tools/versions", "/-"))
    deleted = author_client.delete(fragment_url("tools/versions", "/-"))

    assert created.status_code == 201
    assert created.json()["name"] == "tools/versions"
    assert [v["text"] for v in listed.json()["results"]] == ["the tools fragment"]
    assert [v["text"] for v in own_versions.json()["results"]] == ["named versions"]
    shown = {key: value for key, value in itself.json().items() if not key.startswith("used_by")}
    assert shown == created.json()  # a GET adds which prompts use it (for authors)
    assert itself["ETag"] == created["ETag"]
    assert deleted.status_code == 200
    assert (deleted.json()["name"], deleted.json()["deleted"]) == ("tools/versions", True)
    assert author_client.get(fragment_url("tools")).json()["deleted"] is False


@pytest.mark.parametrize("method", ["put", "delete", "post"])
def test_versions_suffix_answers_405_for_other_methods(
    author_client: APIClient, method: str
) -> None:
    put_fragment(author_client, "tools", "x")

    response = call(author_client, method, fragment_url("tools/versions"), {"text": "y"})

    assert response.status_code == 405
    assert response["Allow"].startswith("GET")
    assert author_client.get(fragment_url("tools")).json()["version"] == 1


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_exact_route_reaches_any_fragment_with_every_method(
    author_client: APIClient, method: str
) -> None:
    put_fragment(author_client, "env/git", "one")

    response = call(author_client, method, fragment_url("env/git", "/-"), {"text": "two"})

    assert response.status_code == 200
    assert response.json()["name"] == "env/git"


def test_fragment_named_versions_alone_is_a_fragment(author_client: APIClient) -> None:
    put_fragment(author_client, "versions", "a fragment called versions")

    response = author_client.get(fragment_url("versions"))

    assert response.status_code == 200
    assert response.json()["text"] == "a fragment called versions"


def test_dash_route_answers_403_when_an_agent_host_writes(
    author_client: APIClient, agent_client: APIClient
) -> None:
    put_fragment(author_client, "tools/versions/-", "x")

    assert agent_client.delete(fragment_url("tools/versions", "/-")).status_code == 403
    assert put_fragment(agent_client, "tools/versions/-", "y").status_code == 403
