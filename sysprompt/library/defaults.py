"""The shipped defaults: the library written for this project, in ``defaults/``.

The folder is an llxprt-style prompt tree (``core.md``, ``env/…``, ``tools/…``,
``providers/<p>/[models/<m>/]<name>.md``, ``sysprompt.json`` for settings), read as
package data and parsed by the core's :func:`~sysprompt_core.library.parse_tree`, the
same parser an import uses. A refusal there is a packaging bug, so it raises.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

from sysprompt_core.library import TreeRecord, parse_tree

PACKAGE = "sysprompt.library"
FOLDER = "defaults"


def shipped_files() -> dict[str, bytes]:
    """The files of the shipped tree, by path relative to it (``/``-separated)."""
    files: dict[str, bytes] = {}
    _collect(resources.files(PACKAGE) / FOLDER, "", files)
    return files


def _collect(folder: Traversable, prefix: str, files: dict[str, bytes]) -> None:
    for entry in folder.iterdir():
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        if entry.is_dir():
            _collect(entry, f"{prefix}{entry.name}/", files)
        elif entry.is_file():
            files[prefix + entry.name] = entry.read_bytes()


@functools.cache
def shipped_records() -> tuple[TreeRecord, ...]:
    """Every shipped variant with its settings, sorted by path."""
    parsed = parse_tree(shipped_files())
    if parsed.refusals:
        reasons = "; ".join(f"{refusal.path}: {refusal.reason}" for refusal in parsed.refusals)
        raise RuntimeError(f"The shipped library does not parse: {reasons}")
    if not parsed.records:
        raise RuntimeError(f"The shipped library is missing: no files in {PACKAGE}/{FOLDER}.")
    return tuple(record for record in parsed.records if record.name is not None)
