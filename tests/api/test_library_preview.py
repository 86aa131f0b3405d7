"""POST /api/library/preview: a fragment or a template rendered for a context, with the
fragments it used and what compression did; nothing stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from sysprompt_core.tokens import count
from tests.api.library_support import PREVIEW, put_fragment

pytestmark = pytest.mark.django_db


def preview(client: APIClient, workdir: Path, **body: Any) -> Any:
    return client.post(PREVIEW, {"cwd": str(workdir), **body}, format="json")


def use(name: str, version: int, provider: str | None = None, model: str | None = None) -> Any:
    return {"name": name, "provider": provider, "model": model, "version": version}


def test_preview_fragment_renders_with_the_host_context(
    author_client: APIClient, agent_client: APIClient, workdir: Path
) -> None:
    put_fragment(
        author_client, "env/ctx", "[prompt:provider] [var:team][if tool:shell] +shell[endif]"
    )

    response = preview(
        agent_client,
        workdir,
        fragment="env/ctx",
        provider="anthropic",
        tools=["shell"],
        variables={"team": "infra"},
    )

    assert response.status_code == 200
    body = response.json()
    assert body["system_prompt"] == "anthropic infra +shell"
    assert body["fragments_used"] == [use("env/ctx", 1)]
    assert body["compression"] is None
    assert body["variables"]["var:team"] == "infra"


def test_preview_fragment_picks_the_variant_for_provider_and_model(
    author_client: APIClient, workdir: Path
) -> None:
    put_fragment(author_client, "core", "default")
    put_fragment(author_client, "core", "claude", query={"provider": "anthropic"})
    put_fragment(
        author_client, "core", "sonnet", query={"provider": "anthropic", "model": "sonnet 4.5"}
    )

    answers = {
        (provider, model): preview(
            author_client, workdir, fragment="core", provider=provider, model=model
        ).json()
        for provider, model in [
            ("Anthropic", "Sonnet 4.5"),
            ("anthropic", "opus"),
            ("openai", "sonnet-4-5"),
        ]
    }

    assert answers["Anthropic", "Sonnet 4.5"]["system_prompt"] == "sonnet"
    assert answers["Anthropic", "Sonnet 4.5"]["fragments_used"] == [
        use("core", 1, "anthropic", "sonnet-4-5")
    ]
    assert answers["anthropic", "opus"]["fragments_used"] == [use("core", 1, "anthropic")]
    assert answers["openai", "sonnet-4-5"]["system_prompt"] == "default"


def test_preview_template_lists_fragments_used_in_first_use_order(
    author_client: APIClient, workdir: Path
) -> None:
    put_fragment(author_client, "b", "B")
    put_fragment(author_client, "a", "A[fragment:b]")
    put_fragment(author_client, "a", "A2 [fragment:b]")

    body = preview(author_client, workdir, template="[fragment:a] [fragment:b]").json()

    assert body["system_prompt"] == "A2 B B"
    assert body["fragments_used"] == [use("a", 2), use("b", 1)]


def test_preview_answers_compression_figures_when_compress_is_on(
    author_client: APIClient, workdir: Path
) -> None:
    source = "## Title\n\n\n- **Label**:   text   here\n"
    put_fragment(author_client, "squeezed", source, compress=True)

    for body in (
        preview(author_client, workdir, fragment="squeezed").json(),
        preview(author_client, workdir, template=source, compress=True).json(),
    ):
        compressed = "# Title\n\n- Label: text here"
        assert body["system_prompt"] == compressed
        assert body["compression"] == {
            "chars_before": len(source),
            "chars_after": len(compressed),
            "tokens_before": count(source).tokens,
            "tokens_after": count(compressed).tokens,
            "tokens_exact": False,  # no provider: an estimate
            "tokens_error": None,
        }


def test_preview_uses_the_current_template_when_neither_is_given(
    author_client: APIClient, workdir: Path
) -> None:
    author_client.put("/api/system-prompt", {"template": "root [fragment:x]"}, format="json")
    put_fragment(author_client, "x", "X")

    body = preview(author_client, workdir).json()

    assert body["system_prompt"] == "root X"
    assert body["fragments_used"] == [use("x", 1)]


def test_preview_applies_the_thread_override_to_a_template(
    author_client: APIClient, workdir: Path
) -> None:
    body = preview(
        author_client,
        workdir,
        template="base",
        override={"content": "first", "strategy": "prepend"},
    ).json()

    assert body["system_prompt"] == "first\n\nbase"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"template": "x", "fragment": "core"}, "fragment"),
        ({"fragment": "Not A Name"}, "fragment"),
        ({"fragment": "missing"}, "fragment"),
        ({"fragment": ""}, "fragment"),
        ({"compress": "yes"}, "compress"),
        ({"tools": "shell"}, "tools"),
        ({"variables": {"x": 1}}, "variables.x"),
        ({"override": {"content": "x", "strategy": "replace"}}, "override.strategy"),
        ({"cwd": "relative"}, "cwd"),
    ],
)
def test_preview_answers_400_naming_the_field_when_invalid(
    author_client: APIClient, workdir: Path, body: dict[str, Any], field: str
) -> None:
    put_fragment(author_client, "core", "core")

    response = preview(author_client, workdir, **body)

    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_preview_answers_413_when_the_template_is_over_the_limit(
    author_client: APIClient, workdir: Path, settings: Any
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "MAX_TEMPLATE_BYTES": 10}

    response = preview(author_client, workdir, template="x" * 11)

    assert response.status_code == 413


def test_preview_answers_415_when_the_body_is_not_json(author_client: APIClient) -> None:
    assert author_client.post(PREVIEW, "cwd=/", content_type="text/plain").status_code == 415


def test_preview_answers_401_without_credentials(workdir: Path) -> None:
    assert APIClient().post(PREVIEW, {"cwd": str(workdir)}, format="json").status_code == 401
