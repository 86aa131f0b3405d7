"""Library §7: the export/import file tree, parsed from bytes and rendered back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.library.tree import (
    ParsedTree,
    Refusal,
    TreeRecord,
    parse_tree,
    render_tree,
)
from sysprompt_core.limits import DEFAULT_MAX_TEMPLATE_BYTES


def _read_tree(top: Path) -> dict[str, bytes]:
    """What an importer does: every regular file under ``top`` by its '/' path."""
    return {
        path.relative_to(top).as_posix(): path.read_bytes()
        for path in sorted(top.rglob("*"))
        if path.is_file()
    }


def test_parse_tree_when_llxprt_directory(tmp_path: Path) -> None:
    files = {
        "core.md": "You are a coding agent.\n",
        "env/git-repository.md": "This is a git repository.\n",
        "tools/shell.md": "Run shell commands with care.\n",
        "providers/anthropic/core.md": "You are Claude, a coding agent.\n",
        "providers/openai/models/gpt-5/core.md": "You are GPT-5.\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")

    parsed = parse_tree(_read_tree(tmp_path), None)

    assert parsed.refusals == ()
    assert [(r.name, r.provider, r.model, r.text) for r in parsed.records] == [
        ("core", None, None, "You are a coding agent.\n"),
        ("env/git-repository", None, None, "This is a git repository.\n"),
        ("core", "anthropic", None, "You are Claude, a coding agent.\n"),
        ("core", "openai", "gpt-5", "You are GPT-5.\n"),
        ("tools/shell", None, None, "Run shell commands with care.\n"),
    ]
    assert all(
        (r.compress, dict(r.defaults), r.strategy) == (False, {}, "append") for r in parsed.records
    )


def test_parse_tree_when_settings_and_root_template() -> None:
    settings = {
        "files": {
            "system-prompt.md": {"compress": True},
            "personas/reviewer.md": {
                "defaults": {"tone": "dry"},
                "strategy": "prepend",
            },
            "providers/Anthropic/models/Claude Sonnet 4.5/core.md": {"compress": True},
        }
    }
    files = {
        "system-prompt.md": b"[fragment:core]",
        "personas/reviewer.md": b"Review in a [var:tone] tone.",
        "providers/Anthropic/models/Claude Sonnet 4.5/core.md": b"Sonnet.",
    }
    parsed = parse_tree(files, json.dumps(settings).encode())
    assert parsed.ok
    assert parsed.records == (
        TreeRecord("personas/reviewer", None, None, "Review in a [var:tone] tone.",
                   defaults={"tone": "dry"}, strategy="prepend"),
        TreeRecord("core", "anthropic", "claude-sonnet-4-5", "Sonnet.", compress=True),
        TreeRecord(None, None, None, "[fragment:core]", compress=True),
    )  # fmt: skip


def test_parse_tree_when_settings_among_files_is_used() -> None:
    files = {"core.md": b"x", "sysprompt.json": b'{"files": {"core.md": {"compress": true}}}'}
    assert parse_tree(files).records == (TreeRecord("core", None, None, "x", compress=True),)
    assert parse_tree(files, files["sysprompt.json"]).ok
    assert parse_tree(files, b"{}").refusals == (
        Refusal("sysprompt.json", "given twice, with different contents."),
    )


@pytest.mark.parametrize(
    ("path", "data", "reason"),
    [
        ("/etc/core.md", b"x", "absolute path"),
        ("C:/core.md", b"x", "absolute path"),
        ("../core.md", b"x", "'..'"),
        ("env/../../core.md", b"x", "'..'"),
        ("./core.md", b"x", "'.'"),
        ("env\\core.md", b"x", "backslash"),
        ("env//core.md", b"x", "empty folder"),
        ("core\x00.md", b"x", "NUL character"),
        ("core.md", b"a\x00b", "NUL byte"),
        ("core.md", b"caf\xe9", "not UTF-8"),
        ("core.md", b"x" * (DEFAULT_MAX_TEMPLATE_BYTES + 1), "at most 262,144"),
        ("Core.md", b"x", "starts with 'C'"),
        ("env/git repository.md", b"x", "holds ' '"),
        ("_draft.md", b"x", "starts with '_'"),
        ("README.txt", b"x", "a file at the top that is not part of the layout"),
        (".DS_Store", b"x", "a file at the top that is not part of the layout"),
        ("env/notes.txt", b"x", "a file that is not part of the layout"),
        ("providers/anthropic.md", b"x", "providers/<provider>/<name>.md"),
        ("providers/--/core.md", b"x", "no letter or digit"),
        ("providers/a/models/--/core.md", b"x", "no letter or digit"),
        ("providers/a/models/m/.md", b"x", "empty segment"),
    ],
)
def test_parse_tree_when_file_refused(path: str, data: bytes, reason: str) -> None:
    parsed = parse_tree({path: data, "core/ok.md": b"fine"}, None)
    (refusal,) = parsed.refusals
    assert refusal.path == path
    assert reason in refusal.reason
    assert [r.name for r in parsed.records] == ["core/ok"]


def test_parse_tree_when_many_refused_reports_every_one() -> None:
    files = {
        "../a.md": b"x",
        "B.md": b"x",
        "c.md": b"\xff",
        "providers/OpenAI/core.md": b"1",
        "providers/openai/core.md": b"2",
        "d.md": b"ok",
    }
    settings = {"files": {"d.md": {"strategy": "replace"}, "e.md": {"compress": True}}}
    parsed = parse_tree(files, json.dumps(settings).encode())
    assert [r.path for r in parsed.refusals] == [
        "sysprompt.json",
        "../a.md",
        "B.md",
        "c.md",
        "providers/openai/core.md",
        "sysprompt.json",
    ]
    assert "never removes" in parsed.refusals[0].reason
    assert "the same variant as providers/OpenAI/core.md" in parsed.refusals[4].reason
    assert "'e.md', which is not in the tree" in parsed.refusals[5].reason
    assert not parsed.ok


@pytest.mark.parametrize(
    ("settings_json", "reason"),
    [
        (b"{", "not valid JSON"),
        (b"\xff", "not valid JSON"),
        (b"[]", "expected {"),
        (b'{"files": {}, "version": 1}', "expected {"),
        (b'{"files": []}', "'files' is an object"),
        (b'{"files": {"core.md": 1}}', "settings are an object"),
        (b'{"files": {"core.md": {"zip": true}}}', "unknown setting 'zip'"),
        (b'{"files": {"core.md": {"compress": "yes"}}}', "compress is true or false"),
        (b'{"files": {"core.md": {"defaults": {"a": 1}}}}', "defaults.a"),
        (b'{"files": {"core.md": {"strategy": "replace"}}}', "never removes"),
        (b'{"files": {"system-prompt.md": {"strategy": "append"}}}', "only 'compress'"),
        (b"[" * 100_000, "not valid JSON"),
    ],
)
def test_parse_tree_when_settings_refused(settings_json: bytes, reason: str) -> None:
    files = {"core.md": b"x", "system-prompt.md": b"y"}
    parsed = parse_tree(files, settings_json)
    assert [r.path for r in parsed.refusals] == ["sysprompt.json"]
    assert reason in parsed.refusals[0].reason


def test_parse_tree_when_zip_folder_entries_skips_them() -> None:
    parsed = parse_tree({"env/": b"", "env/sandbox.md": b"x"})
    assert parsed.ok and [r.name for r in parsed.records] == ["env/sandbox"]


def test_parse_tree_when_max_bytes_given_uses_it() -> None:
    assert parse_tree({"core.md": b"12345"}, max_bytes=5).ok
    assert not parse_tree({"core.md": b"123456"}, max_bytes=5).ok


@pytest.mark.parametrize(
    ("record", "path"),
    [
        (TreeRecord(None, None, None, ""), "system-prompt.md"),
        (TreeRecord("core", None, None, ""), "core.md"),
        (TreeRecord("env/git", "Anthropic", None, ""), "providers/anthropic/env/git.md"),
        (TreeRecord("core", "openai", "GPT 5", ""), "providers/openai/models/gpt-5/core.md"),
        (TreeRecord("models/x", "openai", None, ""), "providers/openai/models/x.md"),
    ],
)
def test_tree_record_when_built_has_path(record: TreeRecord, path: str) -> None:
    assert record.path == path
    assert parse_tree(render_tree([record])) == ParsedTree((record,))


@pytest.mark.parametrize(
    "record",
    [
        TreeRecord("system-prompt", None, None, "x"),
        TreeRecord("providers/a/b", None, None, "x"),
        TreeRecord("providers/x", None, None, "x"),
        TreeRecord("models/m/core", "openai", None, "x"),
    ],
)
def test_render_tree_when_path_ambiguous_raises(record: TreeRecord) -> None:
    with pytest.raises(ValueError, match="would read back as another variant"):
        render_tree([record])


def test_render_tree_when_two_records_at_one_path_raises() -> None:
    with pytest.raises(ValueError, match="two records"):
        render_tree(
            [TreeRecord("core", "OpenAI", None, "a"), TreeRecord("core", "openai", None, "b")]
        )


def test_render_tree_when_settings_writes_only_what_differs() -> None:
    files = render_tree(
        [TreeRecord("a", None, None, "x"), TreeRecord("b", None, None, "y", strategy="prepend")]
    )
    assert json.loads(files["sysprompt.json"]) == {"files": {"b.md": {"strategy": "prepend"}}}
    assert files["a.md"] == b"x"


_SEGMENT = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True)
_NAME = (
    st.lists(_SEGMENT, min_size=1, max_size=3)
    .map("/".join)
    .filter(lambda name: name.split("/")[0] not in ("providers", "models", "system-prompt"))
)
_KEY = st.from_regex(r"[a-z0-9]{1,4}(-[a-z0-9]{1,4}){0,2}", fullmatch=True)
_TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]))
_VARIABLES = st.dictionaries(st.from_regex(r"[a-z][a-z0-9 _-]{0,6}[a-z]", fullmatch=True), _TEXT)


@st.composite
def _records(draw: st.DrawFn) -> TreeRecord:
    provider = draw(st.none() | _KEY)
    model = draw(st.none() | _KEY) if provider is not None else None
    return TreeRecord(
        draw(_NAME),
        provider,
        model,
        draw(_TEXT),
        compress=draw(st.booleans()),
        defaults=draw(_VARIABLES),
        strategy=draw(st.sampled_from(["append", "prepend"])),
    )


@st.composite
def _trees(draw: st.DrawFn) -> ParsedTree:
    records = {record.path: record for record in draw(st.lists(_records(), max_size=8))}
    if draw(st.booleans()):
        root = TreeRecord(None, None, None, draw(_TEXT), compress=draw(st.booleans()))
        records[root.path] = root
    return ParsedTree(tuple(records[path] for path in sorted(records)))


@given(_trees())
def test_parse_tree_when_rendered_tree_round_trips(tree: ParsedTree) -> None:
    assert parse_tree(render_tree(tree.records)) == tree
