"""Importing trees into the real database: what is created, changed, left alone, refused."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from sysprompt.conf import DEFAULT_TEMPLATE
from sysprompt.library.selectors import variant_current
from sysprompt.library.services import variant_delete, variant_save
from sysprompt.prompts.selectors import template_current
from sysprompt.transfer.readers import ARCHIVE, Archive
from sysprompt.transfer.services import (
    ImportReport,
    ImportTarget,
    library_import,
    read_directory,
    read_zip,
)
from tests.transfer.support import (
    LLXPRT,
    SETTINGS,
    actions,
    llxprt_folder,
    refused,
    symlink_member,
    versions,
    zip_of,
)

pytestmark = pytest.mark.django_db


def apply(archive: Archive, author: User | None = None) -> ImportReport:
    return library_import(archive=archive, dry_run=False, author=author)


def imported(top: Path, author: User | None = None) -> ImportReport:
    return apply(read_directory(top), author)


# --- an llxprt folder, as it is ------------------------------------------------------

VARIANTS = [
    # path, (name, provider, model), (compress, defaults, strategy)
    ("core.md", ("core", None, None), (True, {}, "append")),
    ("env/git-repository.md", ("env/git-repository", None, None), (False, {}, "append")),
    (
        "tools/shell.md",
        ("tools/shell", None, None),
        (False, {"shell": "bash", "timeout": "60"}, "prepend"),
    ),
    ("providers/anthropic/core.md", ("core", "anthropic", None), (False, {}, "append")),
    ("providers/openai/models/gpt-5/core.md", ("core", "openai", "gpt-5"), (True, {}, "prepend")),
]


def test_library_import_takes_an_llxprt_folder_as_it_is(tmp_path: Path, author: User) -> None:
    report = imported(llxprt_folder(tmp_path / "prompts"), author)

    assert report.applied is True
    assert actions(report) == dict.fromkeys(LLXPRT, "created")
    assert versions() == (len(LLXPRT), 0)  # no system-prompt.md: the root is left alone
    assert template_current().is_default


@pytest.mark.parametrize(("path", "key", "settings"), VARIANTS)
def test_library_import_stores_each_variant_and_its_settings(
    tmp_path: Path,
    author: User,
    path: str,
    key: tuple[str, str | None, str | None],
    settings: tuple[bool, dict[str, str], str],
) -> None:
    imported(llxprt_folder(tmp_path / "prompts"), author)

    state = variant_current(*key)

    assert state is not None
    assert state.text == LLXPRT[path]  # byte for byte, CRLF and missing newline too
    assert (state.compress, dict(state.defaults), state.strategy) == settings
    assert (state.version, state.source, state.deleted, state.author) == (
        1,
        "import",
        False,
        "author",
    )


def test_library_import_gives_files_without_settings_the_defaults(tmp_path: Path) -> None:
    imported(llxprt_folder(tmp_path / "prompts", settings=None))

    for _, key, _ in VARIANTS:
        state = variant_current(*key)
        assert state is not None
        assert (state.compress, dict(state.defaults), state.strategy) == (False, {}, "append")


def test_library_import_matches_provider_folders_normalised(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts", {"providers/OpenAI/models/GPT 5/core.md": "x"}, None)

    report = imported(top)

    # the item names the file as the archive has it, and beside it the variant it
    # becomes, its folders normalised
    assert actions(report) == {"providers/OpenAI/models/GPT 5/core.md": "created"}
    (item,) = report.items
    assert item.target == ImportTarget("core", "openai", "gpt-5")
    assert variant_current("core", "openai", "gpt-5") is not None


def test_library_import_lists_ignored_files_and_still_applies(tmp_path: Path) -> None:
    files = {**LLXPRT, "README": "about", "notes.txt": "x", ".git/HEAD": "ref"}

    report = imported(llxprt_folder(tmp_path / "prompts", files))

    assert report.applied is True
    assert {path: action for path, action in actions(report).items() if path not in LLXPRT} == {
        "README": "ignored",
        "notes.txt": "ignored",
        ".git": "ignored",
    }
    assert versions()[0] == len(LLXPRT)


# --- the root template ------------------------------------------------------------------


def test_library_import_saves_the_root_template_with_compress(tmp_path: Path) -> None:
    settings = {"files": {"system-prompt.md": {"compress": True}}}
    top = llxprt_folder(tmp_path / "prompts", {"system-prompt.md": "Root [prompt:cwd]\n"}, settings)

    report = imported(top)

    assert actions(report) == {"system-prompt.md": "changed"}
    assert "the built-in default" in report.items[0].reason
    current = template_current()
    assert (current.text, current.compress, current.version) == ("Root [prompt:cwd]\n", True, 1)


def test_library_import_leaves_an_equal_root_template_alone(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts", {"system-prompt.md": DEFAULT_TEMPLATE}, None)

    report = imported(top)

    assert actions(report) == {"system-prompt.md": "unchanged"}
    assert versions() == (0, 0)


def test_library_import_changes_the_root_template_for_compress_alone(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "one", {"system-prompt.md": "Root"}, None)
    imported(top)
    settings = {"files": {"system-prompt.md": {"compress": True}}}
    top = llxprt_folder(tmp_path / "two", {"system-prompt.md": "Root"}, settings)

    report = imported(top)

    assert "compress differs from version 1; becomes version 2" in report.items[0].reason
    assert (template_current().version, template_current().compress) == (2, True)


# --- only where different ---------------------------------------------------------------


def test_library_import_adds_versions_only_where_different(tmp_path: Path) -> None:
    imported(llxprt_folder(tmp_path / "one"))
    files = {**LLXPRT, "env/git-repository.md": "## Git\n\nNew text.\n", "env/sandbox.md": "Box"}
    settings = json.loads(json.dumps(SETTINGS))
    settings["files"]["tools/shell.md"]["defaults"]["shell"] = "zsh"
    settings["files"]["core.md"] = {}

    report = imported(llxprt_folder(tmp_path / "two", files, settings))

    assert actions(report) == {
        "core.md": "changed",
        "env/git-repository.md": "changed",
        "env/sandbox.md": "created",
        "providers/anthropic/core.md": "unchanged",
        "providers/openai/models/gpt-5/core.md": "unchanged",
        "tools/shell.md": "changed",
    }
    reasons = {item.path: item.reason for item in report.items}
    assert "compress differs from version 1; becomes version 2" in reasons["core.md"]
    assert "text differs" in reasons["env/git-repository.md"]
    assert "defaults differs" in reasons["tools/shell.md"]
    assert "same as version 1" in reasons["providers/anthropic/core.md"]
    assert versions()[0] == len(LLXPRT) + 4
    shell = variant_current("tools/shell")
    assert shell is not None and (shell.version, shell.defaults["shell"]) == (2, "zsh")


def test_library_import_twice_adds_nothing(tmp_path: Path) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    imported(top)
    before = versions()

    report = imported(top)

    assert set(actions(report).values()) == {"unchanged"}
    assert versions() == before


def test_library_import_names_every_difference(tmp_path: Path) -> None:
    imported(llxprt_folder(tmp_path / "one", {"core.md": "a"}, None))
    settings = {"files": {"core.md": {"compress": True, "strategy": "prepend"}}}

    report = imported(llxprt_folder(tmp_path / "two", {"core.md": "b"}, settings))

    assert "text, compress and strategy differ" in report.items[0].reason


def test_library_import_brings_a_deleted_variant_back(tmp_path: Path, author: User) -> None:
    top = llxprt_folder(tmp_path / "prompts")
    imported(top)
    variant_delete(name="tools/shell", author=author)

    report = imported(top)

    assert actions(report)["tools/shell.md"] == "created"
    assert "deleted at version 2; comes back as version 3" in report.items[-1].reason
    shell = variant_current("tools/shell")
    assert shell is not None and (shell.version, shell.deleted, shell.source) == (
        3,
        False,
        "import",
    )


def test_library_import_never_deletes(tmp_path: Path) -> None:
    imported(llxprt_folder(tmp_path / "one"))
    variant_save(name="tools/grep", text="Use grep.", author=None)

    report = imported(llxprt_folder(tmp_path / "two", {"core.md": "Only core."}, None))

    assert actions(report) == {"core.md": "changed"}
    for _, key, _ in VARIANTS:
        state = variant_current(*key)
        assert state is not None and not state.deleted
    assert variant_current("tools/grep") is not None


# --- dry run ------------------------------------------------------------------------------


def test_library_import_dry_run_writes_nothing(tmp_path: Path) -> None:
    files = {**LLXPRT, "system-prompt.md": "Root"}

    report = library_import(
        archive=read_directory(llxprt_folder(tmp_path / "prompts", files)),
        dry_run=True,
        author=None,
    )

    assert report.applied is False
    assert actions(report) == {
        **dict.fromkeys(LLXPRT, "created"),
        "system-prompt.md": "changed",
    }
    assert versions() == (0, 0)


def test_library_import_dry_run_then_apply_report_the_same(tmp_path: Path) -> None:
    archive = read_zip(zip_of())

    planned = library_import(archive=archive, dry_run=True, author=None)
    done = library_import(archive=archive, dry_run=False, author=None)

    assert planned.items == done.items
    assert (planned.applied, done.applied) == (False, True)


# --- all or nothing ------------------------------------------------------------------------


def _folder_with(tmp_path: Path, bad: Callable[[Path], None]) -> Archive:
    top = llxprt_folder(tmp_path / "prompts")
    bad(top)
    return read_directory(top)


def _symlinked_file(top: Path) -> None:
    (top.parent / "secret.md").write_text("secret")
    (top / "env" / "secret.md").symlink_to(top.parent / "secret.md")


def _symlinked_folder(top: Path) -> None:
    llxprt_folder(top.parent / "elsewhere", {"core.md": "elsewhere"}, None)
    (top / "providers" / "google").symlink_to(top.parent / "elsewhere")


def _write(path: str, data: bytes) -> Callable[[Path], None]:
    def write(top: Path) -> None:
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_bytes(data)

    return write


REFUSALS: list[tuple[str, Callable[[Path], Archive], str, str]] = [
    ("zip-slip", lambda _: read_zip(zip_of(members=[("../x.md", "x")])), "../x.md", "'..'"),
    ("absolute", lambda _: read_zip(zip_of(members=[("/etc/x.md", "x")])), "/etc/x.md", "absolute"),
    (
        "backslash",
        lambda _: read_zip(zip_of(members=[("env\\x.md", "x")])),
        "env\\x.md",
        "backslash",
    ),
    (
        "symlink member",
        lambda _: read_zip(zip_of(members=[(symlink_member("env/x.md", "/etc/passwd"), "/")])),
        "env/x.md",
        "symbolic link",
    ),
    (
        "symlinked file",
        lambda tmp: _folder_with(tmp, _symlinked_file),
        "env/secret.md",
        "symbolic link",
    ),
    (
        "symlinked folder",
        lambda tmp: _folder_with(tmp, _symlinked_folder),
        "providers/google",
        "symbolic link",
    ),
    (
        "oversized file",
        lambda tmp: _folder_with(tmp, _write("env/big.md", b"x" * 1001)),
        "env/big.md",
        "at most 1,000 bytes",
    ),
    (
        "oversized member",
        lambda _: read_zip(zip_of(members=[("env/big.md", "x" * 1001)])),
        "env/big.md",
        "at most 1,000 bytes",
    ),
    (
        "zip bomb",
        lambda _: read_zip(zip_of(members=[("env/bomb.md", b"\n" * 10_000_000)])),
        "env/bomb.md",
        "at most 1,000 bytes",
    ),
    (
        "not UTF-8",
        lambda tmp: _folder_with(tmp, _write("env/latin.md", "café".encode("latin-1"))),
        "env/latin.md",
        "not UTF-8",
    ),
    (
        "NUL byte",
        lambda _: read_zip(zip_of(members=[("env/nul.md", b"a\0b")])),
        "env/nul.md",
        "NUL",
    ),
    (
        "invalid fragment name",
        lambda tmp: _folder_with(tmp, _write("Tools/Read File.md", b"x")),
        "Tools/Read File.md",
        "tools/read-file",
    ),
    (
        "invalid fragment name in a zip",
        lambda _: read_zip(zip_of(members=[("env/-x.md", "x")])),
        "env/-x.md",
        "starts with '-'",
    ),
    (
        "bad sysprompt.json",
        lambda _: read_zip(zip_of(settings={"files": {"core.md": {"strategy": "replace"}}})),
        "sysprompt.json",
        "strategy",
    ),
    (
        "sysprompt.json not JSON",
        lambda tmp: _folder_with(tmp, _write("sysprompt.json", b"{files:")),
        "sysprompt.json",
        "not valid JSON",
    ),
    (
        "two files for one variant",
        lambda tmp: _folder_with(tmp, _write("providers/anthropic_/core.md", b"again")),
        "providers/anthropic_/core.md",
        "the same variant as",
    ),
]


@pytest.fixture
def small_templates(settings: Settings) -> None:
    settings.SYSPROMPT = {"MAX_TEMPLATE_BYTES": 1000}


@pytest.mark.usefixtures("small_templates")
@pytest.mark.parametrize(
    ("build", "path", "reason"),
    [pytest.param(build, path, reason, id=case) for case, build, path, reason in REFUSALS],
)
def test_library_import_refuses_and_writes_nothing(
    tmp_path: Path, build: Callable[[Path], Archive], path: str, reason: str
) -> None:
    report = apply(build(tmp_path))

    assert report.applied is False and report.refused
    assert [(item.path, reason in item.reason) for item in refused(report)] == [(path, True)]
    assert versions() == (0, 0)
    would = {p: a for p, a in actions(report).items() if p != path}
    assert would == {p: "created" for p in LLXPRT if p != path}


@pytest.mark.parametrize(
    "data", [b"not a zip", b"", zip_of()[:100]], ids=["text", "empty", "truncated"]
)
def test_library_import_refuses_a_corrupt_zip(data: bytes) -> None:
    report = apply(read_zip(data))

    assert [(item.path, item.action) for item in report.items] == [(ARCHIVE, "refused")]
    assert report.applied is False
    assert versions() == (0, 0)


def test_library_import_with_one_bad_file_lists_all_and_writes_nothing(tmp_path: Path) -> None:
    imported(llxprt_folder(tmp_path / "one", {"core.md": "old core"}, None))
    files = {**LLXPRT, "env/Bad Name.md": "x"}
    before = versions()

    report = imported(llxprt_folder(tmp_path / "two", files, None))

    assert report.applied is False
    assert actions(report) == {
        "core.md": "changed",
        "env/Bad Name.md": "refused",
        "env/git-repository.md": "created",
        "providers/anthropic/core.md": "created",
        "providers/openai/models/gpt-5/core.md": "created",
        "tools/shell.md": "created",
    }
    assert versions() == before
    core = variant_current("core")
    assert core is not None and core.text == "old core"


def test_library_import_lists_every_refusal(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {**LLXPRT, "A.md": "x", "env/B.md": "y", "c.md": b"\xff"}
    top = llxprt_folder(tmp_path / "prompts", files, None)
    os.symlink("/etc/passwd", top / "d.md")

    report = imported(top)

    assert [item.path for item in refused(report)] == ["A.md", "c.md", "d.md", "env/B.md"]
