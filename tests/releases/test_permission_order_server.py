"""Issue 31, point 11, against a real server: who may, before what they ask. gunicorn
(from ``gunicorn.conf.py``, DEBUG off, a SQLite file of its own, ``/mcp``'s write tools
on) and a prompt author who may not publish: every write of a protected label — and of
an agent host on one — answers 403 in the API's JSON shape whatever the body holds
(a body that would be refused, one that is no JSON, one of another media type), and
changes nothing; ``/mcp``'s ``set_label`` answers the same 403.

Before, the views checked the body first: ``PUT /api/labels/production
{"protected": false}`` answered 400 ("target required").
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from tests.mcp.served import Deployment, Server, deploy, gunicorn, manage, mcp_session

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a gunicorn server process")

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from sysprompt.accounts import services as accounts
from sysprompt.releases import services
boss = get_user_model().objects.create_user("boss")
for group in (accounts.PROMPT_AUTHORS_GROUP, accounts.PROMPT_PUBLISHERS_GROUP):
    boss.groups.add(Group.objects.get(name=group))
services.production_ensure()
one = services.release_create(message="one", author=boss).release.number
services.label_set(name="production", target={"release": one}, author=boss)
services.label_set(name="eu", target={"release": one}, protected=True, author=boss)
print(json.dumps({"boss": Token.objects.create(user=boss).key}))
"""

JSON = "application/json"
NOT_JSON = ("{not json", JSON)
PLAIN = ('{"target": "latest"}', "text/plain")


@dataclass(frozen=True)
class Served:
    deployment: Deployment
    server: Server

    def call(self, token: str, method: str, path: str, body: Any) -> httpx.Response:
        """``body``: a JSON value, or ``(raw text, content type)``."""
        raw, kind = body if isinstance(body, tuple) else (json.dumps(body), JSON)
        return httpx.request(
            method,
            f"{self.server.url}{path}",
            content=raw.encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": kind},
            timeout=60,
        )

    def state(self) -> list[Any]:
        """What a refused call must leave as it was (read with the publisher's token)."""
        boss = self.deployment.tokens["boss"]
        return [
            self.call(boss, "GET", path, None).json()
            for path in (
                "/api/labels",
                "/api/labels/production/history",
                "/api/labels/eu/history",
                "/api/agent-hosts/host-a/label",
                "/api/agent-hosts/host-a/override",
                "/api/audit",
            )
        ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    deployment = deploy(tmp_path_factory.mktemp("permission-order"))
    more = json.loads(manage(deployment.env, "shell", "--no-imports", "-c", SETUP).splitlines()[-1])
    deployment.tokens.update(more)
    with gunicorn(deployment, "write", SYSPROMPT_MCP_WRITE="true") as server:
        yield Served(deployment, server)


# (method, path, bodies): each body refused with 403 for an author who may not publish
WRITES: list[tuple[str, str, list[Any]]] = [
    (
        "PUT",
        "/api/labels/production",
        [
            {"protected": False},  # the issue's: 400 "target required" before
            {},
            {"target": "main"},
            {"target": {"release": 99}},
            {"target": "latest", "gate": "x"},
            {"target": {"release": 1}, "force": "yes"},
            [],
            NOT_JSON,
            PLAIN,
        ],
    ),
    ("PUT", "/api/labels/eu", [{"protected": False}, {"target": "main"}, NOT_JSON, PLAIN]),
    (
        "POST",
        "/api/labels/production/rollback",
        [{"force": "yes"}, {"force": True}, {"message": 5}, NOT_JSON, PLAIN],
    ),
    ("POST", "/api/labels/eu/rollback", [{"message": ["x"]}, NOT_JSON]),
    (
        "PUT",
        "/api/agent-hosts/host-a/label",
        [{"label": 5}, {"label": "Bad Name"}, {}, {"label": "production"}, NOT_JSON, PLAIN],
    ),
    ("PUT", "/api/agent-hosts/host-a/override", [{"override": 5}, {}, NOT_JSON, PLAIN]),
]
CASES = [(method, path, body) for method, path, bodies in WRITES for body in bodies]


@pytest.mark.parametrize(("method", "path", "body"), CASES)
def test_permission_order_server_refuses_403_whatever_the_body(
    served: Served, method: str, path: str, body: Any
) -> None:
    before = served.state()

    answer = served.call(served.deployment.tokens["author"], method, path, body)

    assert answer.status_code == 403, answer.text
    assert answer.headers["content-type"] == JSON
    assert set(answer.json()) == {"detail"}
    assert "releases.publish_release" in answer.json()["detail"]
    assert served.state() == before


def test_permission_order_server_publisher_gets_the_validation(served: Served) -> None:
    boss = served.deployment.tokens["boss"]

    refused = served.call(boss, "PUT", "/api/labels/production", {"target": "main"})
    kept = served.call(boss, "PUT", "/api/labels/eu", {"message": "no target: kept"})

    assert (refused.status_code, list(refused.json())) == (400, ["target"])
    assert (kept.status_code, kept.json()["target"]) == (200, {"release": 1})


@pytest.mark.parametrize(("name", "target"), [("production", "main"), ("eu", "main"), ("eu", 7)])
def test_permission_order_server_mcp_set_label_is_403(
    served: Served, name: str, target: object
) -> None:
    before = served.state()

    async def attempt() -> dict[str, Any]:
        async with mcp_session(served.server, served.deployment.tokens["author"]) as session:
            result = await session.call_tool("set_label", {"name": name, "target": target})
            assert result.is_error and result.structured_content is not None
            return dict(result.structured_content)

    answer = anyio.run(attempt)

    assert answer["status"] == 403, answer
    assert "releases.publish_release" in answer["error"]
    assert served.state() == before
