"""The references answer says which host-local types the server leaves to the host
(``host_resolves``: those of ``git``, ``file`` and ``system`` that ``SERVER_RESOLVES``
leaves out), so that a client resolves exactly those on the host by default; the ETag
names the whole answer, so a host that cached the answer under one setting is not
answered 304 under another."""

from __future__ import annotations

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

REFERENCES = "/api/system-prompt/references"

# (SERVER_RESOLVES, host_resolves)
CASES: list[tuple[list[str] | None, list[str]]] = [
    (None, []),  # the default: the server resolves every host-local type itself
    (["prompt", "git", "file", "system"], []),
    (["system"], ["file", "git"]),
    (["git", "system"], ["file"]),
    (["prompt"], ["file", "git", "system"]),
    ([], ["file", "git", "system"]),
]


@pytest.mark.parametrize(("resolves", "expected"), CASES)
def test_references_answer_the_types_the_server_leaves_to_the_host(
    host_client: APIClient, settings: Settings, resolves: list[str] | None, expected: list[str]
) -> None:
    if resolves is not None:
        settings.SYSPROMPT = {"SERVER_RESOLVES": resolves}

    response = host_client.get(REFERENCES)

    assert response.status_code == 200
    assert response.json() == {
        "references": ["file:AGENTS.md", "prompt:cwd"],
        "host_resolves": expected,
    }


def test_references_etag_changes_with_what_the_server_leaves_to_the_host(
    host_client: APIClient, settings: Settings
) -> None:
    one_machine = host_client.get(REFERENCES)["ETag"]
    settings.SYSPROMPT = {"SERVER_RESOLVES": []}

    central = host_client.get(REFERENCES, headers={"If-None-Match": one_machine})

    assert central.status_code == 200  # not 304: the answer changed
    assert central["ETag"] != one_machine
    assert central.json()["host_resolves"] == ["file", "git", "system"]
