"""File suggestions for the editor's ``[file:…]`` dialog: names only, inside the roots."""

from __future__ import annotations

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput
from sysprompt.prompts.validation import cwd_check
from sysprompt_core.paths import real_roots
from sysprompt_core.walk import confined_files

# Walking a project for file suggestions stops after this many directory entries, so a
# huge tree costs a bounded time; these folders are never worth suggesting.
FILE_SUGGESTION_SCAN_LIMIT = 5000

FILE_SUGGESTION_SKIPPED = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}
)


def files_suggest(*, cwd: str, query: str = "", limit: int = 50) -> list[str]:
    """Files under ``cwd`` a ``[file:…]`` variable could name, relative to ``cwd``.

    ``cwd`` must pass :func:`cwd_check`; its checked real path is walked with directory
    descriptors (:func:`sysprompt_core.walk.confined_files`): nothing is looked up by
    name twice, no symlink is followed on the way down, and what each step opened must
    lie inside the roots, so a directory swapped for a symlink while the walk runs
    lists nothing outside. Only names are read (no file's content); a symlink is offered
    only when it leads to a regular file inside the allowed roots. Paths containing
    ``query`` (any case) come first when they start with it, then by depth and name.
    When the server reads no files itself (``SERVER_RESOLVES``), the cwd is the agent
    host's and there is nothing to suggest. Raises :class:`InvalidInput` when the
    directory can no longer be opened as it was checked.
    """
    checked = cwd_check(cwd)
    if checked.real is None:
        return []
    roots = real_roots(app_settings().allowed_roots)
    needle = query.strip().lower()
    try:
        found = confined_files(
            checked.real,
            roots,
            max_entries=FILE_SUGGESTION_SCAN_LIMIT,
            skip=FILE_SUGGESTION_SKIPPED,
            wanted=lambda path: needle in path.lower(),
        )
    except OSError:
        raise InvalidInput(
            "cwd", f"{cwd!r} changed while it was read; it is no longer the directory checked."
        ) from None
    found.sort(key=lambda path: (not path.lower().startswith(needle), path.count("/"), path))
    return found[:limit]
