"""The template calls prompt authors use."""

from __future__ import annotations

import pytest

from sysprompt_client import Forbidden, PreconditionFailed
from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated


def test_template_save_and_preview(server: Server, make_client: MakeClient) -> None:
    author, _ = make_client(token=server.author_token)
    current = author.template()
    assert current.version == 1 and not current.is_default and current.etag
    assert current.text == "You work in [prompt:cwd].\n[file:AGENTS.md]\n"
    saved = author.save_template("New [prompt:model].\n", if_match=current.etag)
    assert saved.version == 2 and saved.etag != current.etag and saved.updated_at
    with pytest.raises(PreconditionFailed) as stale:
        author.save_template("Lost update.\n", if_match=current.etag)
    assert stale.value.status == 412 and "version 2" in stale.value.message
    assert author.template().text == "New [prompt:model].\n"

    preview = author.preview(cwd=server.cwd, model="m", template="[prompt:model] [file:AGENTS.md]")
    assert preview["system_prompt"] == "m Run the tests before you commit."
    assert preview["variables"]["prompt:model"] == "m"

    host, _ = make_client()
    with pytest.raises(Forbidden):
        host.save_template("Not allowed.\n")


def test_async_template_calls(server: Server) -> None:
    async def main() -> None:
        client, _ = async_client(server)
        async with client:
            assert (await client.template()).version == 1
            shown = await client.preview(cwd=server.cwd, template="x")
            assert shown["system_prompt"] == "x"
            with pytest.raises(Forbidden):
                await client.save_template("no")

    run_isolated(main())


def test_template_compress_set_kept_and_shown(server: Server, make_client: MakeClient) -> None:
    author, _ = make_client(token=server.author_token)
    assert author.template().compress is False
    assert author.save_template("##  Rules\n", compress=True).compress is True
    kept = author.save_template("## Other rules\n")  # compress left out: kept
    assert kept.compress is True and author.template().compress is True
    assert author.save_template("plain\n", compress=False).compress is False
