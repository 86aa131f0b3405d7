"""Shared setup of the transfer tests: real llxprt-style folders and real zip files."""

from __future__ import annotations

import io
import json
import stat
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sysprompt.library.models import FragmentVersion
from sysprompt.prompts.models import TemplateVersion
from sysprompt.transfer.services import ImportItem, ImportReport

SETTINGS = {
    "files": {
        "core.md": {"compress": True},
        "tools/shell.md": {"defaults": {"shell": "bash", "timeout": "60"}, "strategy": "prepend"},
        "providers/openai/models/gpt-5/core.md": {"strategy": "prepend", "compress": True},
    }
}
LLXPRT = {
    "core.md": "You are a coding agent.\n\n[if fragment:env/git-repository]\n"
    "[fragment:env/git-repository]\n[endif]\n",
    "env/git-repository.md": "## Git\n\n- **Commits**: small and focused.\n",
    "tools/shell.md": "Run commands with [var:shell]; stop after [var:timeout] seconds.\n",
    "providers/anthropic/core.md": "You are Claude, a coding agent.\n",
    "providers/openai/models/gpt-5/core.md": "You are GPT-5.\r\nBe brief.",
}
"""An llxprt-style prompt folder (without ``sysprompt.json``): path → text."""


def llxprt_folder(
    top: Path, files: Mapping[str, str | bytes] = LLXPRT, settings: object = SETTINGS
) -> Path:
    """Write ``files`` (and ``settings`` as ``sysprompt.json`` unless ``None``) under
    ``top``; return ``top``."""
    top.mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        target = top / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    if settings is not None:
        (top / "sysprompt.json").write_text(json.dumps(settings))
    return top


def zip_of(
    files: Mapping[str, str | bytes] = LLXPRT,
    settings: object = SETTINGS,
    members: Sequence[tuple[zipfile.ZipInfo | str, str | bytes]] = (),
) -> bytes:
    """A real zip file of ``files`` (and ``sysprompt.json`` unless ``settings`` is
    ``None``), then ``members`` as given (special entries: links, duplicates)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": a duplicate is what a test wants
        for path, content in files.items():
            archive.writestr(path, content)
        if settings is not None:
            archive.writestr("sysprompt.json", json.dumps(settings))
        for member, content in members:
            archive.writestr(member, content)
    return buffer.getvalue()


def symlink_member(name: str, target: str) -> zipfile.ZipInfo:
    """A zip member entry that is a symbolic link (as ``zip --symlinks`` stores one)."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def versions() -> tuple[int, int]:
    """How many fragment versions and template versions are stored."""
    return FragmentVersion.objects.count(), TemplateVersion.objects.count()


def actions(report: ImportReport) -> dict[str, str]:
    """Path → action of every item (each path once)."""
    return {item.path: item.action for item in report.items}


def refused(report: ImportReport) -> list[ImportItem]:
    return [item for item in report.items if item.action == "refused"]
