"""The client and labels (releases §5): ``label=`` on the client and per call, sent on
resolve, construct, compact and references, part of the memory and directory cache keys;
answers carry the label, release and arm the server built from. Against the live server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sysprompt.releases.services import production_ensure
from sysprompt_client import InvalidRequest
from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated

RESOLVE = "/api/conversations/{}/system-prompt/resolve"


@pytest.fixture
def labelled(server: Server) -> Server:
    """Release 1 of the template; canary → release 1; the working copy changed since."""
    production_ensure()
    server.set_template("Release one in [prompt:cwd].")
    server.api("POST", "/api/releases", author=True, json={"message": "one"})
    server.api("PUT", "/api/labels/canary", author=True, json={"target": {"release": 1}})
    server.set_template("Working copy in [prompt:cwd].")
    return server


def posts(requests: list[tuple[str, str]]) -> list[str]:
    """The paths of the POSTs among ``requests`` (a default client may also ask for the
    references before a first turn)."""
    return [path for method, path in requests if method == "POST"]


def bodies(counting: object) -> list[dict[str, object]]:
    return [json.loads(r.content) for r in counting.sent if r.content]  # type: ignore[attr-defined]


def test_client_label_is_sent_and_answered_with_release(
    labelled: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(label="canary")

    first = client.system_prompt("conv-1", cwd=labelled.cwd)
    again = client.system_prompt("conv-1", cwd=labelled.cwd)

    assert first.text == f"Release one in {labelled.cwd}."
    assert (first.label, first.release, first.arm) == ("canary", 1, None)
    assert again is client.cache.get("conv-1#canary").result  # type: ignore[union-attr]
    assert bodies(counting) == [{"cwd": labelled.cwd, "label": "canary"}]


def test_call_label_overrides_the_client_label_and_is_its_own_cache_key(
    labelled: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(label="canary")

    under_canary = client.system_prompt("conv-2", cwd=labelled.cwd)
    under_production = client.system_prompt("conv-3", cwd=labelled.cwd, label="production")
    asked_again = client.system_prompt("conv-2", cwd=labelled.cwd, label="production")

    assert under_production.text == f"Working copy in {labelled.cwd}."
    assert (under_production.label, under_production.release) == ("production", None)
    # conv-2 under another label is another cache entry: the server answers the frozen prompt.
    assert asked_again.text == under_canary.text and asked_again is not under_canary
    assert [b.get("label") for b in bodies(counting)] == ["canary", "production", "production"]
    for key in ("conv-2#canary", "conv-3#production", "conv-2#production"):
        assert key in client.cache


def test_construct_compact_and_references_send_the_label(
    labelled: Server, make_client: MakeClient
) -> None:
    client, counting = make_client()
    client.system_prompt("conv-4", cwd=labelled.cwd)

    rebuilt = client.construct("conv-4", cwd=labelled.cwd, label="canary")
    compacted = client.compact("conv-4", cwd=labelled.cwd, label="canary")
    client.references(label="canary")

    assert rebuilt.text == f"Release one in {labelled.cwd}." and rebuilt.release == 1
    assert compacted.prompt.label == "canary"
    assert client.system_prompt("conv-4", cwd=labelled.cwd, label="canary") is not None
    assert [b.get("label") for b in bodies(counting)] == [None, "canary", "canary"]
    references = [r for r in counting.sent if r.url.path.endswith("/references")]
    assert references[-1].url.params["label"] == "canary"
    assert all("label" not in r.url.params for r in references[:-1])  # the client asked none


def test_unknown_label_is_an_invalid_request_and_caches_nothing(
    labelled: Server, make_client: MakeClient
) -> None:
    client, _ = make_client(label="nope")

    with pytest.raises(InvalidRequest) as refused:
        client.system_prompt("conv-5", cwd=labelled.cwd)

    assert "label" in refused.value.errors
    assert len(client.cache) == 0


def test_directory_cache_keeps_one_file_per_label(
    labelled: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    first, _ = make_client(cache_dir=cache_dir, label="canary")
    first.system_prompt("conv-6", cwd=labelled.cwd)
    first.close()

    same_label, counting_same = make_client(cache_dir=cache_dir, label="canary")
    other_label, counting_other = make_client(cache_dir=cache_dir)
    cached = same_label.system_prompt("conv-6", cwd=labelled.cwd)
    asked = other_label.system_prompt("conv-6", cwd=labelled.cwd)

    assert counting_same.requests == [] and cached.from_cache
    assert posts(counting_other.requests) == [RESOLVE.format("conv-6")]
    assert asked.text == cached.text  # the frozen prompt, whatever the label asked
    assert len(os.listdir(cache_dir)) == 2


def test_async_client_label(labelled: Server) -> None:
    async def main() -> None:
        client, counting = async_client(labelled, label="canary")
        async with client:
            first = await client.system_prompt("conv-7", cwd=labelled.cwd)
            cached = await client.system_prompt("conv-7", cwd=labelled.cwd)
            other = await client.system_prompt("conv-8", cwd=labelled.cwd, label="production")
            assert (first.release, other.release) == (1, None)
            assert cached is first or cached.from_cache
            assert posts(counting.requests) == [
                RESOLVE.format("conv-7"),
                RESOLVE.format("conv-8"),
            ]

    run_isolated(main())


def test_label_latest_is_the_working_copy_on_every_call(
    labelled: Server, make_client: MakeClient
) -> None:
    client, _ = make_client(label="canary")

    turn = client.system_prompt("conv-latest", cwd=labelled.cwd, label="latest")
    built = client.construct("conv-latest-2", cwd=labelled.cwd, label="latest")
    compacted = client.compact("conv-latest", cwd=labelled.cwd, label="latest")
    references = client.references(label="latest")
    canary = client.system_prompt("conv-canary", cwd=labelled.cwd)

    working = f"Working copy in {labelled.cwd}."
    assert (turn.text, turn.label, turn.release) == (working, "latest", None)
    assert (built.text, built.label) == (working, "latest")
    assert compacted.prompt.text == working
    assert references == ("prompt:cwd",)
    assert canary.text == f"Release one in {labelled.cwd}."
