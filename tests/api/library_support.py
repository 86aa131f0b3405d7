"""What the library's API tests share: URLs and one-line calls through the real API."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlencode

from rest_framework.test import APIClient

LIBRARY = "/api/library"
FRAGMENTS = "/api/library/fragments/"
PREVIEW = "/api/library/preview"
EXPORT = "/api/library/export"
IMPORT = "/api/library/import"
CONVERSATION = "/api/conversations/{}/system-prompt"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def etag_of(version: int, text: str) -> str:
    return f'"{version}-{sha256(text)[:16]}"'


def fragment_url(name: str, suffix: str = "", **query: str) -> str:
    url = FRAGMENTS + name + suffix
    return f"{url}?{urlencode(query)}" if query else url


def put_fragment(
    client: APIClient,
    name: str,
    text: str,
    *,
    query: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    **settings: Any,
) -> Any:
    return client.put(
        fragment_url(name, **(query or {})),
        {"text": text, **settings},
        format="json",
        headers=headers or {},
    )


def turn(client: APIClient, action: str, cwd: object, cid: str = "c1", **body: Any) -> Any:
    return client.post(
        CONVERSATION.format(cid) + f"/{action}", {"cwd": str(cwd), **body}, format="json"
    )


def call(client: APIClient, method: str, url: str, body: object = None) -> Any:
    """``method`` on ``url`` with a JSON ``body`` (GET sends none: its data would replace
    the query string of ``url``)."""
    if method == "get":
        return client.get(url)
    return getattr(client, method)(url, body, format="json")
