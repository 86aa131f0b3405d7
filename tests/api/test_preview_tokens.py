"""Token counts in the API's previews (docs/tokens.md): the prompt and its shared prefix
counted for the provider and model given — exact with OpenAI's encoding for an OpenAI
model, a flagged estimate otherwise — never characters ÷ 4.

Through the real API and database; the reference counts are tiktoken's own, through
``sysprompt_core.tokens.encoding`` (its correctness against a second implementation is
tests/core/test_tokens.py's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from sysprompt_core.tokens import encoding
from tests.api.library_support import put_fragment

pytestmark = pytest.mark.django_db

PREVIEW = "/api/system-prompt/preview"
LIBRARY_PREVIEW = "/api/library/preview"

# Chinese: about one token per one or two characters, where characters ÷ 4 says a
# quarter token each.
CHINESE = "修改文件之前，请先阅读说明。请用中文回答，并保持简洁。所有的回答都要准确。\n" * 30
TEMPLATE = CHINESE + "当前时间：[system:time]\n"


def preview(client: APIClient, cwd: Path, url: str = PREVIEW, **body: Any) -> Any:
    response = client.post(url, {"cwd": str(cwd), **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def tiktoken_count(text: str, name: str) -> int:
    return len(encoding(name).encode_ordinary(text))


@pytest.mark.parametrize(
    ("provider", "model", "name"),
    [("openai", "gpt-4o", "o200k_base"), ("openai", "gpt-4-turbo", "cl100k_base")],
)
def test_preview_counts_tokens_exactly_when_the_model_is_openais(
    author_client: APIClient, workdir: Path, provider: str, model: str, name: str
) -> None:
    shown = preview(author_client, workdir, template=TEMPLATE, provider=provider, model=model)

    prompt = shown["system_prompt"]
    shared = prompt[: shown["shared_prefix_chars"]]
    assert shared == CHINESE + "当前时间："  # system:time ends the shared part
    assert shown["system_prompt_tokens"] == tiktoken_count(prompt, name)
    assert shown["shared_prefix_tokens"] == tiktoken_count(shared, name)
    assert (shown["tokens_exact"], shown["tokens_encoding"]) == (True, name)
    # What the old estimate would have said is far off for Chinese.
    assert shown["system_prompt_tokens"] > 1.5 * -(-len(prompt) // 4)


def test_preview_flags_the_count_an_estimate_when_the_provider_is_anthropic(
    author_client: APIClient, workdir: Path
) -> None:
    shown = preview(
        author_client,
        workdir,
        template=TEMPLATE,
        provider="anthropic",
        model="claude-sonnet-4-5",
    )

    prompt = shown["system_prompt"]
    assert shown["system_prompt_tokens"] == tiktoken_count(prompt, "o200k_base")
    assert (shown["tokens_exact"], shown["tokens_encoding"]) == (False, "o200k_base")


@pytest.mark.parametrize(
    ("provider", "model", "name", "ratio"),
    [
        ("anthropic", "claude-sonnet-4-5", "o200k_base", 1.2),
        ("Anthropic", "claude-sonnet-4-5", "o200k_base", 1.2),  # the ratio's key in any case
        ("google", "gemini-2.5-pro", "o200k_base", 1.0),  # no ratio set for google
        ("openai", "gpt-4-turbo", "cl100k_base", 1.0),  # exact: the ratio never applies
    ],
)
def test_preview_calibrates_an_estimate_by_the_providers_token_ratio(
    author_client: APIClient,
    workdir: Path,
    settings: Settings,
    provider: str,
    model: str,
    name: str,
    ratio: float,
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "TOKEN_RATIOS": {"anthropic": 1.2}}

    shown = preview(author_client, workdir, template=TEMPLATE, provider=provider, model=model)

    prompt = shown["system_prompt"]
    shared = prompt[: shown["shared_prefix_chars"]]
    assert shown["system_prompt_tokens"] == round(tiktoken_count(prompt, name) * ratio)
    assert shown["shared_prefix_tokens"] == round(tiktoken_count(shared, name) * ratio)


def test_preview_counts_the_whole_prompt_once_when_all_of_it_is_shared(
    author_client: APIClient, workdir: Path
) -> None:
    shown = preview(author_client, workdir, template=CHINESE, provider="openai")

    assert shown["shared_prefix_chars"] == len(shown["system_prompt"])
    assert shown["shared_prefix_tokens"] == shown["system_prompt_tokens"]
    assert shown["system_prompt_tokens"] == tiktoken_count(CHINESE, "o200k_base")


def test_preview_answers_zero_tokens_when_there_is_no_prompt(
    author_client: APIClient, workdir: Path
) -> None:
    shown = preview(author_client, workdir, template="   \n", provider="openai")

    assert shown["system_prompt"] is None
    assert (shown["system_prompt_tokens"], shown["shared_prefix_tokens"]) == (0, 0)


def test_library_preview_counts_compression_for_the_variants_provider_when_compress_is_on(
    author_client: APIClient, workdir: Path
) -> None:
    source = "## 标题\n\n\n- **规则**：   先阅读说明   再修改\n" * 5
    put_fragment(author_client, "squeezed", source, compress=True)

    shown = preview(
        author_client,
        workdir,
        LIBRARY_PREVIEW,
        fragment="squeezed",
        provider="openai",
        model="gpt-4",
    )

    compression = shown["compression"]
    compressed = shown["system_prompt"]
    assert compression["tokens_before"] == tiktoken_count(source, "cl100k_base")
    assert compression["tokens_after"] == tiktoken_count(compressed, "cl100k_base")
    assert compression["tokens_exact"] is True
    assert compression["tokens_after"] < compression["tokens_before"]
    assert shown["system_prompt_tokens"] == compression["tokens_after"]
