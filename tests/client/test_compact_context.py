"""The client's ``compact`` keeps the conversation's frozen context for every argument
it leaves out (``cwd`` too), resolving the host's values for that context, and says
which fields were kept; ``me`` says what the token may do."""

from __future__ import annotations

from pathlib import Path

import pytest

from sysprompt_client import InvalidRequest
from tests.client.conftest import MakeClient, Server, async_client
from tests.client.isolated import run_isolated

TEMPLATE = "[prompt:model]|[prompt:provider]|[file:AGENTS.md]|[prompt:cwd]"
ALL_KEPT = ("cwd", "model", "provider", "tools", "variables", "override")
CONVERSATION = ("GET", "/api/conversations/{}/system-prompt")


@pytest.mark.parametrize("resolve_locally", [True, False])
def test_compact_without_context_keeps_the_frozen_one(
    server: Server, make_client: MakeClient, resolve_locally: bool
) -> None:
    server.set_template(TEMPLATE)
    client, counting = make_client(resolve_locally=resolve_locally)
    first = client.system_prompt("kept-1", cwd=server.cwd, model="gpt-5", provider="openai")

    compacted = client.compact("kept-1")

    expected = f"gpt-5|openai|Run the tests before you commit.|{server.cwd}"
    assert first.text == expected
    assert compacted.context_kept == ALL_KEPT
    assert compacted.prompt.text == expected
    assert (compacted.prompt.model, compacted.prompt.provider) == ("gpt-5", "openai")
    later = client.system_prompt("kept-1", cwd=server.cwd, model="gpt-5", provider="openai")
    assert later.context_mismatch == () and later.text == expected
    # The frozen context came from the cache: no GET of the conversation before it.
    assert ("GET", "/api/conversations/kept-1/system-prompt") not in counting.requests


def test_compact_given_only_the_model_keeps_the_rest(
    server: Server, make_client: MakeClient
) -> None:
    server.set_template(TEMPLATE)
    client, _ = make_client(resolve_locally=True)
    client.system_prompt("kept-2", cwd=server.cwd, model="gpt-5", provider="openai")
    fresh, counting = make_client(resolve_locally=True)  # a host that did not cache it

    compacted = fresh.compact("kept-2", model="gpt-4.1")

    assert compacted.context_kept == ("cwd", "provider", "tools", "variables", "override")
    assert compacted.prompt.text == f"gpt-4.1|openai|Run the tests before you commit.|{server.cwd}"
    # The frozen cwd and provider were asked once, for the host's values.
    assert counting.requests.count(("GET", "/api/conversations/kept-2/system-prompt")) == 1


def test_compact_without_cwd_of_a_conversation_never_stored_says_so_before_compacting(
    server: Server, make_client: MakeClient
) -> None:
    client, counting = make_client(resolve_locally=True)

    with pytest.raises(InvalidRequest) as refused:
        client.compact("never-stored", model="gpt-5")

    assert refused.value.errors["cwd"][0].startswith("Conversation 'never-stored' has no stored")
    assert ("POST", "/api/conversations/never-stored/system-prompt/compact") not in (
        counting.requests
    )


def test_async_compact_without_context_keeps_the_frozen_one(server: Server) -> None:
    server.set_template(TEMPLATE)

    async def main() -> tuple[tuple[str, ...], str | None]:
        client, _ = async_client(server, resolve_locally=True)
        async with client:
            await client.system_prompt("kept-3", cwd=server.cwd, model="gpt-5", provider="openai")
            compacted = await client.compact("kept-3")
        return compacted.context_kept, compacted.prompt.model

    assert run_isolated(main()) == (ALL_KEPT, "gpt-5")


def test_me_of_the_host_token_may_do_nothing_more(
    server: Server, make_client: MakeClient, tmp_path: Path
) -> None:
    client, _ = make_client()

    me = client.me()

    assert (me.username, me.agent_host, me.permissions) == ("client-host", True, frozenset())
    author, _ = make_client(token=server.author_token)
    assert author.me().permissions == {"template", "library", "releases", "evaluations"}
