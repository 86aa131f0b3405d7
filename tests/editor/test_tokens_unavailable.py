"""A text tiktoken cannot count shows as "tokens unavailable" on the editor's pages,
the reason in its tooltip, and the page is answered (issue 31, point 3).

Django's test client against the real views and templates, with a counter that does
not cut runs of whitespace, so that tiktoken really panics on the prompt of sixteen
``[var:…]`` values of 65,000 spaces (``tests/api/test_tokens_unavailable.py`` shows the
real counter counting it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.releases import services as releases
from sysprompt_core import tokens
from tests.editor.releases_support import (  # noqa: F401  (fixtures)
    production,
    publisher,
    publisher_web,
    release,
    template,
)
from tests.editor.test_tokens_pages import authors_web, conversation, spans  # noqa: F401

pytestmark = pytest.mark.django_db

RUN = " " * 65_000 * 16
TEMPLATE = "".join(f"[var:v{n}]" for n in range(16)) + "end."
VARIABLES = {f"v{n}": " " * 65_000 for n in range(16)}


@pytest.fixture(autouse=True)
def uncut(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = tokens.TokenCounter(run=10**7)
    monkeypatch.setattr(tokens, "_counter", lambda: counter)


def unavailable(figure: dict[str, str]) -> bool:
    return (
        figure["text"] == "tokens unavailable"
        and figure["class"] == "is-unavailable"
        and figure["data-tokens"] == ""
        and figure["title"].startswith("unavailable: tiktoken failed on a part of")
    )


def test_editor_preview_shows_tokens_unavailable_when_tiktoken_fails(
    authors_web: Client,  # noqa: F811
    workdir: Path,
) -> None:
    data = {
        "cwd": str(workdir),
        "template": TEMPLATE,
        "variables": "\n".join(f"{name}={value}" for name, value in VARIABLES.items()),
        "provider": "openai",
    }
    response = authors_web.post("/editor/preview", data, HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    html = response.content.decode()
    prompt = spans(html)[0]
    assert unavailable(prompt)
    stats = html.split('id="preview-stats"', 1)[1].split("</div>", 1)[0]
    assert "(estimate)" not in stats


def test_conversation_pages_show_tokens_unavailable_when_tiktoken_fails(
    authors_web: Client,  # noqa: F811
    workdir: Path,
) -> None:
    conversation("spaces", workdir, "Hello" + RUN + "x", provider="openai", model="gpt-4o")

    listed = authors_web.get("/conversations/")
    page = authors_web.get("/conversations/spaces/")

    assert (listed.status_code, page.status_code) == (200, 200)
    [figure] = spans(listed.content.decode().split('class="conversation-tokens"', 1)[1])
    assert figure["text"] == "—" and figure["class"] == "is-unavailable"
    size = page.content.decode().split('id="conversation-size"', 1)[1].split("</dd>", 1)[0]
    [figure] = spans(size)
    assert unavailable(figure)
    assert "(estimate)" not in size


def test_impact_report_shows_tokens_unavailable_when_tiktoken_fails(
    publisher_web: Client,  # noqa: F811
    publisher: User,  # noqa: F811
    workdir: Path,
) -> None:
    template(TEMPLATE)
    number = release("first")
    releases.label_set(name="production", target={"release": number}, author=publisher)
    template(TEMPLATE + "!")
    releases.test_context_save(
        name="ci",
        fields={"cwd": str(workdir), "provider": "openai", "variables": VARIABLES},
        author=publisher,
    )

    response = publisher_web.get("/releases/publish?label=production&candidate=latest")

    assert response.status_code == 200
    row = response.content.decode().split('data-key="test:ci">', 1)[1].split("</tr>", 1)[0]
    before, after = spans(row.split('class="impact-size"', 1)[1])
    assert before["text"] == "—" and unavailable(after)
    assert "impact-token-change" not in row
