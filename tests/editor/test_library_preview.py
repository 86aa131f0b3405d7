"""The editor's preview with a host context: provider, tools, variables, the fragments
used with their variants, lint of unknown fragments and cycles, compression."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.test import Client

from tests.editor.library_support import SCRIPT, save


def preview(client: Client, workdir: Path, **fields: Any) -> Any:
    data = {"template": "", "cwd": str(workdir), **fields}
    response = client.post("/editor/preview", data)
    assert response.status_code == 200
    return response


def test_preview_lists_fragments_used_with_their_variant(author_web: Client, workdir: Path) -> None:
    save("core", "Default core [fragment:env/git]")
    save("core", "Anthropic core [fragment:env/git]", "anthropic")
    save("env/git", "git here")

    response = preview(
        author_web, workdir, template="[fragment:core]", provider="Anthropic", model="x"
    )

    assert response.context["prompt"] == "Anthropic core git here"
    rows = [(r["name"], r["variant"], r["version"]) for r in response.context["fragments_used"]]
    assert rows == [("core", "anthropic", 1), ("env/git", "default", 1)]
    content = response.content.decode()
    assert 'href="/library/core?provider=anthropic"' in content


def test_preview_renders_tools_and_variables(author_web: Client, workdir: Path) -> None:
    response = preview(
        author_web,
        workdir,
        template="[if tool:shell]shell [endif][if tool:grep]grep [endif][var:who]",
        tools="shell, read_file",
        variables=f"who={SCRIPT}\n\n",
    )

    assert response.context["prompt"] == f"shell {SCRIPT}"
    assert SCRIPT not in response.content.decode()


def test_preview_names_the_refused_host_field(author_web: Client, workdir: Path) -> None:
    bad_tool = preview(author_web, workdir, template="x", tools="sh[ell")
    bad_line = preview(author_web, workdir, template="x", variables="no equals sign")

    assert "tools" in bad_tool.context["errors"]
    assert "variables" in bad_line.context["errors"]
    assert 'data-field="tools"' in bad_tool.content.decode()
    assert bad_tool.context["preview"] is None


def test_preview_lint_reports_unknown_fragment_and_cycle(author_web: Client, workdir: Path) -> None:
    save("core", "[fragment:env/git]")
    save("env/git", "[fragment:core]")

    unknown = preview(author_web, workdir, template="[fragment:nope]")
    cycle = preview(author_web, workdir, template="[fragment:env/git]", fragment="core")

    assert any("nope" in d.message for d in unknown.context["diagnostics"])
    messages = " ".join(d.message for d in cycle.context["diagnostics"])
    assert "core" in messages and "env/git" in messages
    assert cycle.context["diagnostics_data"]


def test_preview_compress_shows_before_and_after(author_web: Client, workdir: Path) -> None:
    text = "## Title\n\n\n- **Label**:   text\n"

    response = preview(author_web, workdir, template=text, compress="on")

    compression = response.context["compression"]
    assert compression.chars_before == len(text)
    assert compression.chars_after < compression.chars_before
    assert response.context["prompt"] == "# Title\n\n- Label: text"
    assert 'id="preview-compression"' in response.content.decode()
