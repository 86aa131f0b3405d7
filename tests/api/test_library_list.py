"""GET /api/library: the fragments with their variants and flags, by name, in cursor pages."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.library_support import LIBRARY, fragment_url, put_fragment

pytestmark = pytest.mark.django_db


def _all_pages(client: APIClient, **query: Any) -> list[dict[str, Any]]:
    page = client.get(LIBRARY, query).json()
    results = list(page["results"])
    while page["next"]:
        page = client.get(page["next"]).json()
        results.extend(page["results"])
    return results


def test_list_library_shows_variants_and_flags(
    author_client: APIClient, agent_client: APIClient
) -> None:
    put_fragment(author_client, "zz/core", "default")
    put_fragment(author_client, "zz/core", "claude", query={"provider": "anthropic"})
    author_client.delete(fragment_url("zz/core", provider="anthropic"))

    response = agent_client.get(LIBRARY, {"search": "zz/"})

    assert response.status_code == 200
    [fragment] = response.json()["results"]
    assert fragment["name"] == "zz/core"
    variants = {(v["provider"], v["model"]): v for v in fragment["variants"]}
    assert set(variants) == {(None, None), ("anthropic", None)}
    default = variants[None, None]
    assert (default["version"], default["source"], default["deleted"]) == (1, "user", False)
    assert (default["edited"], default["newer_default"], default["pinned"]) == (True, False, False)
    assert variants["anthropic", None]["deleted"] is True
    assert "text" not in default


def test_list_library_pages_by_name_both_ways(author_client: APIClient) -> None:
    names = [f"zz/page-{index}" for index in range(5)]
    for name in reversed(names):
        put_fragment(author_client, name, "text")

    first = author_client.get(LIBRARY, {"search": "zz/page", "page_size": "2"}).json()
    second = author_client.get(first["next"]).json()
    third = author_client.get(second["next"]).json()
    back = author_client.get(third["previous"]).json()

    assert [f["name"] for f in first["results"]] == names[:2]
    assert [f["name"] for f in second["results"]] == names[2:4]
    assert [f["name"] for f in third["results"]] == names[4:]
    assert third["next"] is None
    assert first["previous"] is None
    assert back["results"] == second["results"]


def test_list_library_holds_every_fragment_in_name_order(author_client: APIClient) -> None:
    for name in ("zz/b", "zz/a/x", "zz/a", "zz/c"):
        put_fragment(author_client, name, name)

    listed = [f["name"] for f in _all_pages(author_client, page_size=1)]

    mine = [name for name in listed if name.startswith("zz/")]
    assert mine == ["zz/a", "zz/a/x", "zz/b", "zz/c"]
    assert listed == sorted(listed)


def test_list_library_search_matches_name_or_text(author_client: APIClient) -> None:
    put_fragment(author_client, "zz/needle-name", "plain")
    put_fragment(author_client, "zz/other", "holds a NEEDLE in its text")
    put_fragment(author_client, "zz/none", "nothing")

    names = [f["name"] for f in _all_pages(author_client, search="needle")]

    assert names == ["zz/needle-name", "zz/other"]


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({"cursor": "garbage"}, 404),
        ({"page_size": "0"}, 400),
        ({"page_size": "x"}, 400),
        ({"search": "nul\0"}, 400),
    ],
)
def test_list_library_answers_errors_when_asked_wrongly(
    agent_client: APIClient, query: dict[str, str], status: int
) -> None:
    assert agent_client.get(LIBRARY, query).status_code == status


def test_list_library_answers_401_without_credentials() -> None:
    assert APIClient().get(LIBRARY).status_code == 401
