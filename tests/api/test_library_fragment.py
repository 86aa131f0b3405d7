"""One variant of a fragment over the API: GET, PUT and DELETE /api/library/fragments/{name}
(real server stack, real database)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings
from rest_framework.test import APIClient

from tests.api.library_support import call, etag_of, fragment_url, put_fragment

pytestmark = pytest.mark.django_db


def test_put_creates_variant_with_201_and_etag(author_client: APIClient) -> None:
    response = put_fragment(author_client, "env/git-repository", "You are in [git:branch].\n")

    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "env/git-repository"
    assert (body["provider"], body["model"], body["version"]) == (None, None, 1)
    assert body["text"] == "You are in [git:branch].\n"
    assert (body["compress"], body["defaults"], body["strategy"]) == (False, {}, "append")
    assert (body["source"], body["deleted"], body["edited"]) == ("user", False, True)
    assert (body["newer_default"], body["pinned"], body["author"]) == (False, False, "author")
    assert response["ETag"] == etag_of(1, "You are in [git:branch].\n")


def test_put_existing_variant_answers_200_and_next_version(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "one")

    response = put_fragment(author_client, "core", "two", compress=True, strategy="prepend")

    assert response.status_code == 200
    assert (response.json()["version"], response.json()["text"]) == (2, "two")
    assert (response.json()["compress"], response.json()["strategy"]) == (True, "prepend")


def test_put_keeps_current_settings_when_left_out(author_client: APIClient) -> None:
    put_fragment(
        author_client, "persona", "x", compress=True, defaults={"who": "me"}, strategy="prepend"
    )

    body = put_fragment(author_client, "persona", "y").json()

    assert (body["compress"], body["defaults"], body["strategy"]) == (
        True,
        {"who": "me"},
        "prepend",
    )


def test_get_answers_the_newest_version_with_its_etag(
    author_client: APIClient, agent_client: APIClient
) -> None:
    saved = put_fragment(author_client, "core", "text [prompt:model]")

    response = agent_client.get(fragment_url("core"))

    assert response.status_code == 200
    assert response.json() == {**saved.json(), "used_by": None, "used_by_truncated": False}
    assert response["ETag"] == saved["ETag"]


def test_get_answers_404_when_the_variant_does_not_exist(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "default")

    missing = author_client.get(fragment_url("nope"))
    other_variant = author_client.get(fragment_url("core", provider="openai"))

    assert missing.status_code == 404
    assert "nope" in missing.json()["detail"]
    assert other_variant.status_code == 404


@pytest.mark.parametrize(
    ("query", "provider", "model"),
    [
        ({"provider": "Anthropic"}, "anthropic", None),
        ({"provider": "Open AI", "model": "GPT 5.1"}, "open-ai", "gpt-5-1"),
        ({"provider": "anthropic", "model": "Claude Sonnet 4.5"}, "anthropic", "claude-sonnet-4-5"),
        ({"provider": "", "model": ""}, None, None),
    ],
)
def test_variant_query_is_normalised_when_given(
    author_client: APIClient, query: dict[str, str], provider: str | None, model: str | None
) -> None:
    saved = put_fragment(author_client, "core", "variant", query=query)
    normalised = {k: v for k, v in (("provider", provider), ("model", model)) if v}

    loaded = author_client.get(fragment_url("core", **normalised))

    assert saved.status_code == 201
    assert (saved.json()["provider"], saved.json()["model"]) == (provider, model)
    assert loaded.json() == {**saved.json(), "used_by": [], "used_by_truncated": False}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"model": "gpt-5"}, "model"),
        ({"provider": "--"}, "provider"),
        ({"provider": "openai", "model": "!!"}, "model"),
        ({"provider": "x" * 201}, "provider"),
        ({"provider": "nul\0"}, "provider"),
    ],
)
def test_variant_query_answers_400_naming_the_field_when_invalid(
    author_client: APIClient, query: dict[str, str], field: str
) -> None:
    for method in ("get", "put", "delete"):
        response = call(author_client, method, fragment_url("core", **query), {"text": "x"})

        assert response.status_code == 400, method
        assert field in response.json(), (method, response.json())


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        ("Env/Git Repository", "env/git-repository"),
        ("a//b", None),
        ("../x", None),
        ("-core", None),
        ("x" * 201, None),
        ("core/", None),
    ],
)
def test_name_answers_400_showing_a_valid_name_when_invalid(
    author_client: APIClient, name: str, suggested: str | None
) -> None:
    for method in ("get", "put", "delete"):
        response = call(author_client, method, fragment_url(name), {"text": "x"})

        assert response.status_code == 400, (method, name)
        message = response.json()["name"][0]
        assert "for example" in message
        if suggested:
            assert repr(suggested) in message


def test_put_answers_412_with_the_current_etag_when_if_match_is_stale(
    author_client: APIClient,
) -> None:
    stale = put_fragment(author_client, "core", "one")["ETag"]
    current = put_fragment(author_client, "core", "two")["ETag"]

    response = put_fragment(author_client, "core", "three", headers={"If-Match": stale})

    assert response.status_code == 412
    assert response["ETag"] == current
    assert "version 2" in response.json()["detail"]
    assert author_client.get(fragment_url("core")).json()["text"] == "two"


def test_put_saves_when_if_match_is_current_or_a_star(author_client: APIClient) -> None:
    etag = put_fragment(author_client, "core", "one")["ETag"]

    matched = put_fragment(author_client, "core", "two", headers={"If-Match": etag})
    star = put_fragment(author_client, "core", "three", headers={"If-Match": "*"})

    assert (matched.status_code, star.status_code) == (200, 200)
    assert star.json()["version"] == 3


def test_put_new_variant_answers_412_when_if_match_names_a_version(
    author_client: APIClient,
) -> None:
    response = put_fragment(author_client, "core", "one", headers={"If-Match": '"1-abc"'})

    assert response.status_code == 412
    assert "ETag" not in response
    assert author_client.get(fragment_url("core")).status_code == 404


def test_put_answers_400_when_if_match_is_not_an_entity_tag(author_client: APIClient) -> None:
    response = put_fragment(author_client, "core", "one", headers={"If-Match": "version 1"})

    assert response.status_code == 400
    assert "/api/library/fragments/core" in response.json()["If-Match"][0]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "text"),
        ({"text": 3}, "text"),
        ({"text": "x", "compress": "yes"}, "compress"),
        ({"text": "x", "strategy": "replace"}, "strategy"),
        ({"text": "x", "strategy": 1}, "strategy"),
        ({"text": "x", "defaults": ["a"]}, "defaults"),
        ({"text": "x", "defaults": {"a": 1}}, "defaults"),
        ({"text": "x", "defaults": {"a\0": "b"}}, "defaults"),
        ({"text": "nul\0"}, "text"),
    ],
)
def test_put_answers_400_naming_the_field_when_the_body_is_invalid(
    author_client: APIClient, body: dict[str, object], field: str
) -> None:
    response = author_client.put(fragment_url("core"), body, format="json")

    assert response.status_code == 400
    assert any(key == field or key.startswith(f"{field}.") for key in response.json())
    assert author_client.get(fragment_url("core")).status_code == 404


def test_put_answers_413_when_the_text_is_over_the_limit(
    author_client: APIClient, settings: Settings
) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 100}

    response = put_fragment(author_client, "core", "x" * 101)

    assert response.status_code == 413
    assert "the limit is 100 bytes" in response.json()["detail"]
    assert put_fragment(author_client, "core", "x" * 100).status_code == 201


def test_put_answers_415_when_the_body_is_not_json(author_client: APIClient) -> None:
    response = author_client.put(fragment_url("core"), "text=x", content_type="text/plain")

    assert response.status_code == 415


@pytest.mark.parametrize("method", ["put", "delete"])
def test_write_answers_403_when_an_agent_host_writes(
    author_client: APIClient, agent_client: APIClient, method: str
) -> None:
    put_fragment(author_client, "core", "one")

    response = call(agent_client, method, fragment_url("core"), {"text": "x"})

    assert response.status_code == 403
    assert "sysprompt.change_templateversion" in response.json()["detail"]
    assert author_client.get(fragment_url("core")).json()["version"] == 1


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_fragment_answers_401_without_credentials(method: str) -> None:
    response = call(APIClient(), method, fragment_url("core"), {"text": "x"})

    assert response.status_code == 401


def test_delete_adds_a_deleted_version_and_put_restores(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "kept text", strategy="prepend")

    deleted = author_client.delete(fragment_url("core"))
    loaded = author_client.get(fragment_url("core"))
    restored = put_fragment(author_client, "core", "back", headers={"If-Match": deleted["ETag"]})

    assert deleted.status_code == 200
    assert (deleted.json()["version"], deleted.json()["deleted"]) == (2, True)
    assert deleted.json()["text"] == "kept text"
    assert loaded.json()["deleted"] is True
    assert loaded["ETag"] == deleted["ETag"]
    assert restored.status_code == 200
    assert (restored.json()["version"], restored.json()["deleted"]) == (3, False)
    assert restored.json()["strategy"] == "prepend"


def test_delete_answers_412_when_if_match_is_stale(author_client: APIClient) -> None:
    stale = put_fragment(author_client, "core", "one")["ETag"]
    put_fragment(author_client, "core", "two")

    response = author_client.delete(fragment_url("core"), headers={"If-Match": stale})

    assert response.status_code == 412
    assert response["ETag"] == author_client.get(fragment_url("core"))["ETag"]
    assert author_client.get(fragment_url("core")).json()["deleted"] is False


def test_delete_answers_404_when_the_variant_does_not_exist(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "default only")

    assert author_client.delete(fragment_url("nope")).status_code == 404
    assert author_client.delete(fragment_url("core", provider="openai")).status_code == 404


def test_delete_leaves_other_variants_alone(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "default")
    put_fragment(author_client, "core", "claude", query={"provider": "anthropic"})

    author_client.delete(fragment_url("core", provider="anthropic"))

    assert author_client.get(fragment_url("core")).json()["deleted"] is False
    assert author_client.get(fragment_url("core", provider="anthropic")).json()["deleted"] is True


def test_delete_answers_404_when_the_variant_is_already_deleted(author_client: APIClient) -> None:
    put_fragment(author_client, "core", "one")
    author_client.delete(fragment_url("core"))

    response = author_client.delete(fragment_url("core"))

    assert response.status_code == 404
    assert author_client.get(fragment_url("core")).json()["version"] == 2


@pytest.mark.parametrize("method", ["put", "delete"])
def test_session_write_answers_403_without_csrf(author: User, method: str) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(author)

    response = call(client, method, fragment_url("core"), {"text": "x"})

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
