"""File suggestions for the editor's ``[file:…]`` dialog: names only, inside the roots."""

from __future__ import annotations

import os
from collections import deque

from sysprompt.conf import app_settings
from sysprompt.prompts.validation import cwd_check
from sysprompt_core.paths import is_inside, real_roots

# Walking a project for file suggestions stops after this many directory entries, so a
# huge tree costs a bounded time; these folders are never worth suggesting.
FILE_SUGGESTION_SCAN_LIMIT = 5000

FILE_SUGGESTION_SKIPPED = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}
)


def files_suggest(*, cwd: str, query: str = "", limit: int = 50) -> list[str]:
    """Files under ``cwd`` a ``[file:…]`` variable could name, relative to ``cwd``.

    ``cwd`` must pass :func:`cwd_check`; its checked real path is walked. Only names
    are read (no file is opened); a symlink is offered only when its target is a
    regular file inside the allowed roots. Paths containing ``query`` (any case) come
    first when they start with it, then by depth and name. When the server reads no
    files itself (``SERVER_RESOLVES``), the cwd is the agent host's and there is
    nothing to suggest.
    """
    root = cwd_check(cwd).real
    if root is None:
        return []
    roots = real_roots(app_settings().allowed_roots)
    needle = query.strip().lower()
    found: list[str] = []
    pending = deque([""])
    scanned = 0
    while pending and scanned < FILE_SUGGESTION_SCAN_LIMIT:
        relative = pending.popleft()
        try:
            with os.scandir(os.path.join(root, relative)) as entries:
                children = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in children:
            scanned += 1
            path = f"{relative}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in FILE_SUGGESTION_SKIPPED:
                    pending.append(f"{path}/")
            elif needle in path.lower() and _suggestable(entry, roots):
                found.append(path)
    found.sort(key=lambda path: (not path.lower().startswith(needle), path.count("/"), path))
    return found[:limit]


def _suggestable(entry: os.DirEntry[str], roots: list[str]) -> bool:
    if not entry.is_symlink():
        return entry.is_file(follow_symlinks=False)
    target = os.path.realpath(entry.path)
    return os.path.isfile(target) and any(is_inside(target, root) for root in roots)
