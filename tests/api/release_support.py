"""What the releases API tests share: URLs, a publisher's client, and a snapshot of
every table a release or label operation could change."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from sysprompt.releases.models import HostLabel, Label, LabelMove, Release, ReleaseFragment
from sysprompt.releases.models import TestContext as TestContextRow

RELEASES = "/api/releases"
LABELS = "/api/labels"
IMPACT = "/api/releases/impact"
TEST_CONTEXTS = "/api/test-contexts"


def release_url(number: object, suffix: str = "") -> str:
    return f"{RELEASES}/{number}{suffix}"


def label_url(name: str, suffix: str = "") -> str:
    return f"{LABELS}/{name}{suffix}"


def tables() -> list[list[tuple[Any, ...]]]:
    """Every row of the releases app, to compare before and after a refused call."""
    models = (Release, ReleaseFragment, Label, LabelMove, TestContextRow, HostLabel)
    return [list(model.objects.order_by("pk").values_list()) for model in models]


def put_label(client: APIClient, name: str, target: object, **body: Any) -> Any:
    return client.put(label_url(name), {"target": target, **body}, format="json")


def create_release(client: APIClient, message: str = "") -> Any:
    return client.post(RELEASES, {"message": message}, format="json")
