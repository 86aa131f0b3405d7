"""Sizes in tokens on the editor's pages (docs/tokens.md, "How sizes are shown"): the
preview, the conversations, the library and the impact report count with
``sysprompt_core.tokens`` for the provider and model each figure is for, and mark an
estimate with "≈" and a tooltip saying why.

Django's test client against the real views, templates and database; the reference
counts are tiktoken's own (``sysprompt_core.tokens.encoding``).
"""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from pytest_django import Settings

from sysprompt.accounts import services as accounts
from sysprompt.library import services as library
from sysprompt.prompts.catalog import default_prompt
from sysprompt.prompts.models import ConversationPrompt
from sysprompt.releases import services as releases
from sysprompt_core.tokens import encoding
from tests.editor.library_support import save, web
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    production,
    publisher,
    publisher_web,
    release,
    template,
)

pytestmark = pytest.mark.django_db

CHINESE = "修改文件之前，请先阅读说明。请用中文回答，并保持简洁。\n" * 20
ANTHROPIC_NOTE = "estimate: anthropic has no public offline tokenizer"


def tiktoken_count(text: str, name: str) -> int:
    return len(encoding(name).encode_ordinary(text))


def spans(html: str) -> list[dict[str, str]]:
    """Every token figure of a page: its attributes and its text."""
    found = []
    for match in re.finditer(r'<span class="token-count([^"]*)"([^>]*)>([^<]*)</span>', html):
        attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', match.group(2)))
        attributes["class"] = match.group(1).strip()
        attributes["text"] = html_lib.unescape(match.group(3))
        attributes["title"] = html_lib.unescape(attributes.get("title", ""))
        found.append(attributes)
    return found


@pytest.fixture
def authors_web(db: None) -> Client:
    """A member of the "Prompt authors" group (sees every conversation)."""
    accounts.groups_ensure()
    member = User.objects.create_user("grace")
    member.groups.add(Group.objects.get(name=accounts.PROMPT_AUTHORS_GROUP))
    return web(member)


# --- the preview ------------------------------------------------------------------------


def editor_preview(client: Client, workdir: Path, **data: str) -> str:
    response = client.post("/editor/preview", {"cwd": str(workdir), **data}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def test_editor_preview_shows_exact_tokens_when_the_model_is_openais(
    authors_web: Client, workdir: Path
) -> None:
    html = editor_preview(authors_web, workdir, template=CHINESE, provider="openai", model="gpt-4o")

    expected = tiktoken_count(CHINESE, "o200k_base")
    prompt, shared = spans(html)[:2]  # the prompt's size, then the shared prefix's
    assert prompt["text"] == f"{expected:,} tokens"
    assert (prompt["data-tokens"], prompt["data-exact"]) == (str(expected), "true")
    assert prompt["title"] == "exact: counted with OpenAI's tokenizer (o200k_base)"
    assert shared["data-tokens"] == str(expected)  # the whole prompt is shared
    stats = html.split('id="preview-stats"', 1)[1].split("</div>", 1)[0]
    assert "(estimate)" not in stats and "÷ 4" not in html


def test_editor_preview_marks_an_estimate_when_the_provider_is_anthropic(
    authors_web: Client, workdir: Path
) -> None:
    html = editor_preview(
        authors_web,
        workdir,
        template=CHINESE + "[system:time]",
        provider="anthropic",
        model="claude-sonnet-4-5",
    )

    prompt, shared = spans(html)[:2]
    assert prompt["text"].startswith("≈") and prompt["data-exact"] == "false"
    assert prompt["class"] == "is-estimate"
    assert prompt["title"].startswith(ANTHROPIC_NOTE)
    assert shared["data-tokens"] == str(tiktoken_count(CHINESE, "o200k_base"))
    assert '<small class="muted">(estimate)</small>' in html


def test_editor_preview_counts_compression_for_the_model_when_compress_is_on(
    authors_web: Client, workdir: Path
) -> None:
    source = "## 标题\n\n\n- **规则**：   先阅读说明   再修改\n" * 5
    html = editor_preview(
        authors_web, workdir, template=source, compress="on", provider="openai", model="gpt-4"
    )

    part = html.split('id="preview-compression"', 1)[1].split("</p>", 1)[0]
    before, after = spans(part)
    assert before["data-tokens"] == str(tiktoken_count(source, "cl100k_base"))
    assert int(after["data-tokens"]) < int(before["data-tokens"])
    assert before["data-exact"] == after["data-exact"] == "true"


# --- the conversations ------------------------------------------------------------------


def conversation(cid: str, cwd: Path, prompt: str | None, **fields: object) -> None:
    now = timezone.now()
    ConversationPrompt.objects.create(
        prompt=default_prompt(),
        conversation_id=cid,
        system_prompt=prompt,
        cwd=str(cwd),
        created_at=now,
        constructed_at=now,
        label="production",
        **fields,
    )


def test_conversations_page_shows_each_prompt_in_tokens_for_its_frozen_model(
    authors_web: Client, workdir: Path
) -> None:
    conversation("old-gpt", workdir, CHINESE, provider="openai", model="gpt-4")
    conversation("claude", workdir, CHINESE, provider="anthropic", model="claude-sonnet-4-5")
    conversation("empty", workdir, None, provider="openai", model="gpt-4o")

    html = authors_web.get("/conversations/").content.decode()

    rows = {}
    for row in html.split("<tr>")[1:]:
        cid = re.search(r'class="mono">([\w-]+)</a>', row)
        if cid:
            rows[cid.group(1)] = spans(row)
    [gpt4] = rows["old-gpt"]
    assert (gpt4["text"], gpt4["data-exact"]) == (
        f"{tiktoken_count(CHINESE, 'cl100k_base'):,}",
        "true",
    )
    [claude] = rows["claude"]
    assert claude["text"] == f"≈{tiktoken_count(CHINESE, 'o200k_base'):,}"
    assert claude["title"].startswith(ANTHROPIC_NOTE)
    assert rows["empty"] == []  # no prompt: no size


def test_conversation_page_shows_its_size_in_tokens(authors_web: Client, workdir: Path) -> None:
    conversation("c1", workdir, CHINESE, provider="openai", model="gpt-4o")

    html = authors_web.get("/conversations/c1/").content.decode()

    size = html.split('id="conversation-size"', 1)[1].split("</dd>", 1)[0]
    [figure] = spans(size)
    assert figure["text"] == f"{tiktoken_count(CHINESE, 'o200k_base'):,} tokens"
    assert f"{len(CHINESE)} characters" in size


# --- the library ------------------------------------------------------------------------


def test_library_shows_each_variants_size_for_its_provider_and_model(
    authors_web: Client,
) -> None:
    save("style/chinese", CHINESE)
    save("style/chinese", CHINESE, "openai", "gpt-4")
    save("style/chinese", CHINESE, "anthropic")

    html = authors_web.get("/library/").content.decode()

    variants = {
        label: spans(row)
        for label, row in re.findall(r'data-variant="([^"]+)">(.*?)</li>', html, re.S)
    }
    sizes = {label: found[0] for label, found in variants.items() if found}
    cl100k, o200k = tiktoken_count(CHINESE, "cl100k_base"), tiktoken_count(CHINESE, "o200k_base")
    openai = next(v for k, v in sizes.items() if "gpt-4" in k)
    anthropic = next(v for k, v in sizes.items() if "anthropic" in k)
    default = next(v for k, v in sizes.items() if "gpt-4" not in k and "anthropic" not in k)
    assert (openai["data-tokens"], openai["data-exact"]) == (str(cl100k), "true")
    assert (anthropic["data-tokens"], anthropic["data-exact"]) == (str(o200k), "false")
    assert anthropic["title"].startswith(ANTHROPIC_NOTE)
    assert (default["data-tokens"], default["data-exact"]) == (str(o200k), "false")
    assert default["title"].startswith("estimate: no provider")


def test_library_shows_a_variants_estimate_calibrated_by_its_providers_token_ratio(
    authors_web: Client, settings: Settings
) -> None:
    settings.SYSPROMPT = {**settings.SYSPROMPT, "TOKEN_RATIOS": {"anthropic": 1.3}}
    save("style/chinese", CHINESE)
    save("style/chinese", CHINESE, "anthropic")

    html = authors_web.get("/library/").content.decode()

    rows = re.findall(r'data-variant="([^"]+)">(.*?)</li>', html, re.S)
    sizes = {label: spans(row)[0] for label, row in rows if spans(row)}
    o200k = tiktoken_count(CHINESE, "o200k_base")
    anthropic = next(v for k, v in sizes.items() if "anthropic" in k)
    default = next(v for k, v in sizes.items() if "anthropic" not in k)
    assert (anthropic["data-tokens"], anthropic["data-exact"]) == (str(round(o200k * 1.3)), "false")
    assert anthropic["title"] == (
        f"{ANTHROPIC_NOTE}; the o200k_base count × 1.3, the ratio calibrated for anthropic"
    )
    assert (default["data-tokens"], default["data-exact"]) == (str(o200k), "false")


def test_library_shows_no_size_when_the_variant_is_deleted(authors_web: Client) -> None:
    save("gone", CHINESE)
    save("gone", "kept", "openai")
    library.variant_delete(name="gone", author=None)

    html = authors_web.get("/library/").content.decode()

    rows = dict(re.findall(r'data-variant="([^"]+)">(.*?)</li>', html, re.S))
    [deleted] = [row for row in rows.values() if "badge-deleted" in row]
    [live] = [row for row in rows.values() if "badge-deleted" not in row]
    assert spans(deleted) == [] and "variant-size" not in deleted
    assert spans(live)[0]["data-tokens"] == str(tiktoken_count("kept", "o200k_base"))


def test_library_variant_page_shows_its_compressed_size(authors_web: Client) -> None:
    source = "## 标题\n\n\n- **规则**：   先阅读说明   再修改\n" * 5
    save("squeezed", source, "openai", "gpt-4o", compress=True)

    response = authors_web.get("/library/squeezed?provider=openai&model=gpt-4o")

    size = response.content.decode().split('id="variant-size"', 1)[1].split("</dd>", 1)[0]
    [figure] = spans(size)
    assert int(figure["data-tokens"]) < tiktoken_count(source, "o200k_base")
    assert figure["data-exact"] == "true" and "compressed" in size


# --- the impact report ------------------------------------------------------------------


def test_impact_report_shows_tokens_before_and_after_for_each_contexts_model(
    publisher_web: Client,  # noqa: F811
    publisher: User,  # noqa: F811
    workdir: Path,
) -> None:
    template("[fragment:core]")
    save("core", CHINESE)
    number = release("first")
    releases.label_set(name="production", target={"release": number}, author=publisher)
    save("core", CHINESE + "再见。")
    releases.test_context_save(
        name="gpt4",
        fields={"cwd": str(workdir), "provider": "openai", "model": "gpt-4"},
        author=publisher,
    )
    releases.test_context_save(
        name="claude", fields={"cwd": str(workdir), "provider": "anthropic"}, author=publisher
    )

    html = publisher_web.get("/releases/publish?label=production&candidate=latest").content
    page = html.decode()

    rows = dict(re.findall(r'data-key="test:(\w+)">(.*?)</tr>', page, re.S))
    before, after = spans(rows["gpt4"].split('class="impact-size"', 1)[1])
    assert before["data-tokens"] == str(tiktoken_count(CHINESE, "cl100k_base"))
    assert after["data-tokens"] == str(tiktoken_count(CHINESE + "再见。", "cl100k_base"))
    assert before["data-exact"] == "true"
    change = int(after["data-tokens"]) - int(before["data-tokens"])
    assert f'data-change="{change}">(+{change})' in rows["gpt4"]
    claude_before, _ = spans(rows["claude"].split('class="impact-size"', 1)[1])
    assert claude_before["title"].startswith(ANTHROPIC_NOTE)
    assert ", estimate)" in rows["claude"]
