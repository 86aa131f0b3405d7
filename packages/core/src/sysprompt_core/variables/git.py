"""``git:`` variables: the branch and status of the repository at the working directory.

Nothing is started: the repository is read in-process with pygit2 (libgit2), which runs
no program a repository names (filter drivers, fsmonitor, textconv, hooks) and never
writes (the index is read, not refreshed). The pipeline of one resolution:

1. **Find** the repository: from the working directory's real path up to the allowed
   root that holds it (the root itself may be a repository, nothing above it is looked
   at), stopping at a filesystem boundary as git does. With no allowed roots, the
   working directory is the root (as for ``file:``). ``GIT_DIR`` and the like in the
   server's environment are ignored.
2. **Confine** it before anything in it is read: a ``.git`` file's target, the git
   directory, its common directory (worktrees), its config and index, the object
   directory and its alternates, and the work tree (``core.worktree``) must all lie
   inside the allowed roots; so must every populated submodule's. Otherwise the
   repository does not exist for ``git:`` and the reason names what lies outside.
   It is opened with ``RepositoryOpenFlag.NO_SEARCH``.
3. **Read**, in a worker process of the resolver's pool (``sysprompt_core.sandbox``),
   under ``options.git_timeout``, counted from when a worker is free for it (it queues
   for one at most ``options.git_queue_timeout`` first). The worker confined itself
   before it read anything: Landlock lets it read beneath the allowed roots only, and
   write nowhere, so whatever libgit2 opens — through a symlink inside ``.git``, an
   ``include.path``, an ignore file — cannot lie outside the roots; ``RLIMIT_AS`` bounds
   its memory. At the deadline the worker is killed (its memory freed at once) and the
   answer is "git timed out"; when every one of the ``options.git_workers`` workers
   stayed busy for the whole queue time, the values are
   :class:`~sysprompt_core.variables.registry.Busy`. The confinement of step 2 stays,
   and is all there is where Landlock is unavailable. The configuration libgit2 reads is
   the repository's, and the global one (``~/.gitconfig``, ``$XDG_CONFIG_HOME/git``:
   config, ignore and attributes files) only where it lies inside the allowed roots; the
   system one (``/etc/gitconfig``) never.
4. **Format** as the CLI does. ``branch`` is ``git rev-parse --abbrev-ref HEAD``:
   ``HEAD`` when detached, missing on an unborn branch (where rev-parse fails), and
   shortened as unambiguously as git shortens it (``heads/v1`` when a tag ``v1``
   exists). ``status`` is ``git status --short`` (git 2.39) without its last line
   ending: index changes against HEAD with renames, work-tree changes, conflicts
   (``UU``, ``AA``, ``DU``, ``UD``, ``AU``, ``UA``, ``DD``), intent-to-add entries,
   submodules (``M``, ``m``, ``?``), untracked files and directories (collapsed as git
   collapses them), paths relative to the working directory and C-quoted as
   ``core.quotePath`` asks; ``status.showUntrackedFiles``, ``status.relativePaths`` and
   ``status.renames``/``diff.renames`` and their rename limits are honoured. A status
   longer than ``options.max_file_bytes`` is missing.

Where the CLI's answer depends on something not reproduced in-process (a filter driver
or ``working-tree-encoding`` the attributes name, ``status.branch``, copy detection,
renames between intent-to-add entries and deletions), the status is missing with the
reason, never a guess.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, DiffOption, FileMode, RepositoryOpenFlag

from sysprompt_core.paths import is_inside, real_roots
from sysprompt_core.sandbox.pool import Exchange, Outcome, WorkerPool, WorkerSpec
from sysprompt_core.variables._text import describe_error
from sysprompt_core.variables.registry import (
    Busy,
    Missing,
    RegistryBuilder,
    ResolveContext,
    Resolver,
    ResolverOptions,
    Value,
    VariableInfo,
)

VARIABLES: tuple[VariableInfo, ...] = (
    VariableInfo(
        "git",
        "branch",
        "The current git branch in the working directory (HEAD when detached).",
    ),
    VariableInfo(
        "git",
        "status",
        "The short git status of the working directory; empty when the tree is clean.",
    ),
)

NAMES = frozenset({"branch", "status"})

# Submodules within submodules that are followed, as git would, before giving up.
MAX_SUBMODULE_DEPTH = 8

# git's ref_rev_parse_rules, the order in which a short name is resolved.
_REV_PARSE_RULES = (
    "{}",
    "refs/{}",
    "refs/tags/{}",
    "refs/heads/{}",
    "refs/remotes/{}",
    "refs/remotes/{}/HEAD",
)

# Index entry flags (git's on-disk values, as libgit2 keeps them).
_STAGE_SHIFT = 12
_ASSUME_VALID = 0x8000
_INTENT_TO_ADD = 1 << 13
_SKIP_WORKTREE = 1 << 14

_GITLINK = int(FileMode.COMMIT)

_DELTA_CHAR: Mapping[DeltaStatus, str] = {
    DeltaStatus.ADDED: "A",
    DeltaStatus.DELETED: "D",
    DeltaStatus.MODIFIED: "M",
    DeltaStatus.RENAMED: "R",
    DeltaStatus.COPIED: "C",
    DeltaStatus.TYPECHANGE: "T",
}

# Stage mask (1: base, 2: ours, 4: theirs) -> git's short code for a conflict.
_CONFLICT = {1: "DD", 2: "AU", 3: "UD", 4: "UA", 5: "DU", 6: "AA", 7: "UU"}

_ATTRIBUTE_DRIVER = re.compile(rb"(?:^|\s)(filter|working-tree-encoding)=(\S+)")


class _Unavailable(Exception):
    """The value cannot be given; the message is the reason shown to people."""


# --- 1. and 2.: find and confine -------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    """A confined, opened repository and where the working directory lies in it."""

    repo: pygit2.Repository
    workdir: str | None  # real path; None when there is no work tree here
    roots: tuple[str, ...]


def _outside(what: str, path: str) -> _Unavailable:
    return _Unavailable(f"the repository's {what} {path} is outside the allowed roots")


def _check_inside(what: str, path: str, roots: Sequence[str]) -> str:
    real = os.path.realpath(path)
    if not any(is_inside(real, root) for root in roots):
        raise _outside(what, real)
    return real


def _read_small(path: str, limit: int = 65536) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)


def _gitfile_target(path: str, roots: Sequence[str]) -> str:
    """The git directory a ``.git`` file names, once it is known to lie in the roots."""
    _check_inside(".git file", path, roots)
    try:
        text = _read_small(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unavailable(f"the .git file {path} cannot be read") from exc
    if not text.startswith("gitdir: "):
        raise _Unavailable(f"the .git file {path} is not a valid gitfile")
    target = text[len("gitdir: ") :].rstrip("\r\n\t ")
    return os.path.join(os.path.dirname(path), target)


def _common_dir(gitdir: str, roots: Sequence[str]) -> str:
    """The common directory of ``gitdir`` (itself unless it is a worktree's)."""
    marker = os.path.join(gitdir, "commondir")
    if not os.path.lexists(marker):
        return gitdir
    try:
        text = _read_small(marker).decode("utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unavailable(f"the commondir file of {gitdir} cannot be read") from exc
    return _check_inside("common directory", os.path.join(gitdir, text), roots)


def _is_git_directory(path: str, roots: Sequence[str]) -> bool:
    """git's is_git_directory: objects and refs directories and a valid HEAD."""
    try:
        common = _common_dir(path, roots)
    except _Unavailable:
        raise
    if not (
        os.path.isdir(os.path.join(common, "objects"))
        and os.path.isdir(os.path.join(common, "refs"))
    ):
        return False
    head = os.path.join(path, "HEAD")
    if os.path.islink(head):
        return os.readlink(head).startswith("refs/")
    try:
        text = _read_small(head, 256).decode("utf-8", "replace")
    except OSError:
        return False
    if text.startswith("ref:"):
        return text[4:].lstrip(" \t").startswith("refs/")
    return re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\s*", text) is not None


def _confine_gitdir(gitdir: str, roots: Sequence[str]) -> str:
    """Check every part of the git directory that libgit2 reads; its common dir."""
    real = _check_inside("git directory", gitdir, roots)
    common = _common_dir(real, roots)
    for what, path in (
        ("config", os.path.join(real, "config")),
        ("config", os.path.join(common, "config")),
        ("index", os.path.join(real, "index")),
        ("HEAD", os.path.join(real, "HEAD")),
        ("refs directory", os.path.join(common, "refs")),
        ("packed refs", os.path.join(common, "packed-refs")),
    ):
        if os.path.lexists(path):
            _check_inside(what, path, roots)
    _confine_objects(os.path.join(common, "objects"), roots, depth=0)
    return real


def _confine_objects(objects: str, roots: Sequence[str], depth: int) -> None:
    """The object directory and, as libgit2 follows them, its alternates."""
    real = _check_inside("object directory" if depth == 0 else "object alternate", objects, roots)
    alternates = os.path.join(real, "info", "alternates")
    if not os.path.lexists(alternates):
        return
    _check_inside("alternates file", alternates, roots)
    if depth >= 5:
        return
    try:
        lines = _read_small(alternates).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unavailable("the repository's alternates file cannot be read") from exc
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            _confine_objects(os.path.join(real, line), roots, depth + 1)


def _open(path: str, roots: Sequence[str]) -> pygit2.Repository:
    """Open ``path`` (a work tree top or a git directory) without searching upward, and
    confine the files its configuration names."""
    try:
        repo = pygit2.Repository(path, flags=RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        raise _Unavailable(f"the repository cannot be opened: {describe_error(exc)}") from exc
    try:
        if repo.workdir:
            _check_inside("work tree", repo.workdir, roots)
        _confine_config(repo.config, roots)
    except BaseException:
        repo.free()
        raise
    return repo


def _confine_config(config: pygit2.Config, roots: Sequence[str]) -> None:
    """The files the configuration includes (``include.path``, ``includeIf``) must lie
    inside the roots. (In a worker confined by Landlock, libgit2 cannot even open an
    outside one; this holds where Landlock is unavailable, after the fact: their
    values are never used.)"""
    for origin in _included_files(config):
        _check_inside("configuration include", origin, roots)


def _confine_status_files(repo: pygit2.Repository, roots: Sequence[str]) -> None:
    """The ignore and attributes files the status reads besides the work tree's must
    lie inside the roots: ``core.excludesFile``, ``core.attributesFile`` and the git
    directory's ``info/exclude`` and ``info/attributes`` (checked on their real paths,
    as Landlock would, so a symlink counts where it leads)."""
    config = repo.config
    for key in ("core.excludesFile", "core.attributesFile"):
        value = _config_value(config, key)
        if value:
            _check_inside(key, os.path.expanduser(value), roots)
    gitdir = repo.path
    for folder in dict.fromkeys((gitdir, _common_dir(gitdir, roots))):
        for what, name in (("exclude file", "exclude"), ("attributes file", "attributes")):
            path = os.path.join(folder, "info", name)
            if os.path.lexists(path):
                _check_inside(what, path, roots)


def _included_files(config: pygit2.Config) -> set[str]:
    """The files the configuration's entries came from by inclusion."""
    from pygit2.ffi import C, ffi

    raw: Any = config._c_config  # pygit2 1.21 keeps the libgit2 config here
    iterator = ffi.new("git_config_iterator **")
    if C.git_config_iterator_new(iterator, raw) != 0:
        raise _Unavailable("the repository's configuration cannot be read")
    entry = ffi.new("git_config_entry **")
    origins: set[str] = set()
    try:
        while C.git_config_next(entry, iterator[0]) == 0:
            if entry[0].include_depth and entry[0].origin_path != ffi.NULL:
                origins.add(os.fsdecode(ffi.string(entry[0].origin_path)))
    finally:
        C.git_config_iterator_free(iterator[0])
    return origins


def _found(repo: pygit2.Repository, roots: tuple[str, ...]) -> _Found:
    """``repo``, opened by :func:`_open`, once its git directory is known to lie in the
    roots (freed otherwise: pygit2's Repository lives in a reference cycle)."""
    try:
        _check_inside("git directory", repo.path, roots)
    except BaseException:
        repo.free()
        raise
    workdir = os.path.realpath(repo.workdir) if repo.workdir else None
    return _Found(repo, workdir, roots)


def _root_of(directory: str, roots: Sequence[str]) -> str | None:
    holding = [root for root in roots if is_inside(directory, root)]
    return max(holding, key=len) if holding else None


def git_roots(directory: str, options: ResolverOptions) -> tuple[str, ...]:
    """The real allowed roots, or the working directory when none are set."""
    return tuple(real_roots(options.allowed_roots)) or (directory,)


def find_repository(directory: str, options: ResolverOptions) -> _Found:
    """The confined repository holding ``directory``; raises :class:`_Unavailable`."""
    roots = git_roots(directory, options)
    root = _root_of(directory, roots)
    if root is None:
        raise _Unavailable("the working directory is outside the allowed roots")
    current = directory
    device = os.stat(current).st_dev
    while True:
        dotgit = os.path.join(current, ".git")
        gitdir: str | None = None
        if os.path.isfile(dotgit) or (os.path.islink(dotgit) and not os.path.isdir(dotgit)):
            gitdir = _gitfile_target(dotgit, roots)
            _check_inside("git directory", gitdir, roots)
            if not _is_git_directory(gitdir, roots):
                raise _Unavailable(f"the .git file {dotgit} names no git directory")
        elif os.path.isdir(dotgit):
            _check_inside("git directory", dotgit, roots)
            if _is_git_directory(dotgit, roots):
                gitdir = dotgit
        if gitdir is not None:
            _confine_gitdir(gitdir, roots)
            return _found(_open(current, roots), roots)
        if _is_git_directory(current, roots):  # a bare repository, or inside .git
            _confine_gitdir(current, roots)
            return _Found(_open(current, roots), None, roots)
        parent = os.path.dirname(current)
        if current == root or parent == current:
            raise _Unavailable("not a git repository")
        try:
            if os.stat(parent).st_dev != device:
                raise _Unavailable("not a git repository")
        except OSError as exc:
            raise _Unavailable("not a git repository") from exc
        current = parent


# --- 4a. the branch --------------------------------------------------------------------


def _ref_exists(repo: pygit2.Repository, name: str) -> bool:
    try:
        reference = repo.references.get(name)
        if reference is None:
            return False
        reference.resolve()
    except (pygit2.GitError, KeyError, ValueError):
        return False
    return True


def shorten_ref(repo: pygit2.Repository, refname: str, strict: bool) -> str:
    """git's shorten_unambiguous_ref, as ``rev-parse --abbrev-ref`` uses it."""
    for index in range(len(_REV_PARSE_RULES) - 1, 0, -1):
        prefix, _, suffix = _REV_PARSE_RULES[index].partition("{}")
        if not (
            refname.startswith(prefix)
            and refname.endswith(suffix)
            and len(refname) > len(prefix) + len(suffix)
        ):
            continue
        short = refname[len(prefix) : len(refname) - len(suffix)]
        checked = len(_REV_PARSE_RULES) if strict else index
        if not any(
            _ref_exists(repo, _REV_PARSE_RULES[other].format(short))
            for other in range(checked)
            if other != index
        ):
            return short
    return refname


def read_branch(repo: pygit2.Repository) -> Value:
    if repo.head_is_detached:
        return "HEAD"
    if repo.head_is_unborn:
        target = repo.references["HEAD"].target
        name = target.removeprefix("refs/heads/") if isinstance(target, str) else "HEAD"
        return Missing(f"the branch {name} has no commits yet (git rev-parse fails there)")
    strict = _config_bool(repo.config, "core.warnAmbiguousRefs", True)
    return shorten_ref(repo, repo.head.name, strict).strip()


# --- 4b. the status --------------------------------------------------------------------


def _config_value(config: pygit2.Config, key: str) -> str | None:
    try:
        value = config[key]
    except (KeyError, pygit2.GitError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _config_bool(config: pygit2.Config, key: str, default: bool) -> bool:
    if _config_value(config, key) is None:
        return default
    try:
        return config.get_bool(key)
    except (pygit2.GitError, ValueError) as exc:
        raise _Unavailable(f"the config value {key} is not a boolean") from exc


def _config_int(config: pygit2.Config, key: str) -> int | None:
    if _config_value(config, key) is None:
        return None
    try:
        return config.get_int(key)
    except (pygit2.GitError, ValueError) as exc:
        raise _Unavailable(f"the config value {key} is not a number") from exc


@dataclass(frozen=True)
class _Settings:
    untracked: str  # no, normal or all
    quote_fully: bool
    relative: bool
    renames: bool
    rename_limit: int


def _settings(config: pygit2.Config) -> _Settings:
    untracked = _config_value(config, "status.showUntrackedFiles") or "normal"
    if untracked not in ("no", "normal", "all"):
        raise _Unavailable(f"status.showUntrackedFiles is {untracked!r}, which git rejects")
    if _config_bool(config, "status.branch", False):
        raise _Unavailable("status.branch=true adds a branch header that is not reproduced")
    rename_key = "status.renames" if _config_value(config, "status.renames") else "diff.renames"
    renames_text = (_config_value(config, rename_key) or "true").lower()
    if renames_text in ("copy", "copies"):
        raise _Unavailable(f"{rename_key}=copies asks for copy detection, not reproduced")
    limit = _config_int(config, "status.renameLimit")
    if limit is None:
        limit = _config_int(config, "diff.renameLimit")
    return _Settings(
        untracked=untracked,
        quote_fully=_config_bool(config, "core.quotePath", True),
        relative=_config_bool(config, "status.relativePaths", True),
        renames=_config_bool(config, rename_key, True),
        rename_limit=1000 if limit is None else (limit if limit > 0 else 32767),
    )


@dataclass
class _IndexFacts:
    stages: dict[bytes, int] = field(default_factory=dict)  # conflicts: path -> mask
    intent_to_add: set[bytes] = field(default_factory=set)
    unchanged: set[bytes] = field(default_factory=set)  # skip-worktree, assume-valid
    gitlinks: dict[bytes, bytes] = field(default_factory=dict)  # path -> commit (hex)
    attributes: list[bytes] = field(default_factory=list)  # .gitattributes files
    ignores: list[bytes] = field(default_factory=list)  # .gitignore files
    paths: list[bytes] = field(default_factory=list)  # stage-0 entries (read by the loop)
    index: Any = None  # libgit2's index, when ``unchanged`` was not filled (the scan)

    def is_unchanged(self, path: bytes) -> bool:
        """Whether git leaves ``path`` alone in the work tree (skip-worktree or
        assume-valid), asked of the entry itself when the scan did not list them."""
        if self.index is None:
            return path in self.unchanged
        from pygit2.ffi import C, ffi

        entry = C.git_index_get_bypath(self.index, path, 0)
        return entry != ffi.NULL and bool(
            entry.flags_extended & _SKIP_WORKTREE or entry.flags & _ASSUME_VALID
        )


def _index_facts(index: pygit2.Index, gitdir: str, loop: bool = False) -> _IndexFacts:
    """What the diffs do not say about the index: stages and git's entry flags.

    A loop over every entry in Python costs about a microsecond an entry, more than
    libgit2's own status on a large repository. So, unless ``loop`` asks for the loop
    (``paths`` is needed), a version-2 index on disk is scanned instead, in C
    (``bytes.find``): such an index has no extended flags (so no intent-to-add and no
    skip-worktree entry); the conflicts come from libgit2's conflict iterator, the
    submodules from the gitlink mode's bytes, the ``.gitattributes`` and
    ``.gitignore`` files from their names' bytes, each candidate confirmed by looking
    its path up in libgit2's index. Any other index (version 3 or 4, another hash, one
    that changed since libgit2 read it) is looped over as before.
    """
    raw: Any = index._index
    if not loop:
        facts = _scanned_facts(raw, os.path.join(gitdir, "index"))
        if facts is not None:
            return facts
    return _looped_facts(raw)


def _looped_facts(raw: Any) -> _IndexFacts:
    from pygit2.ffi import C, ffi  # libgit2's own entries keep the flags

    facts = _IndexFacts()
    for position in range(C.git_index_entrycount(raw)):
        entry = C.git_index_get_byindex(raw, position)
        path = ffi.string(entry.path)
        stage = (entry.flags >> _STAGE_SHIFT) & 3
        if stage:
            facts.stages[path] = facts.stages.get(path, 0) | (1 << (stage - 1))
            continue
        facts.paths.append(path)
        if entry.flags_extended & _INTENT_TO_ADD:
            facts.intent_to_add.add(path)
        if entry.flags_extended & _SKIP_WORKTREE or entry.flags & _ASSUME_VALID:
            facts.unchanged.add(path)
        if entry.mode == _GITLINK:
            facts.gitlinks[path] = bytes(ffi.buffer(entry.id.id, 20)).hex().encode()
        if path == b".gitattributes" or path.endswith(b"/.gitattributes"):
            facts.attributes.append(path)
        elif path == b".gitignore" or path.endswith(b"/.gitignore"):
            facts.ignores.append(path)
    return facts


# The on-disk index (git's index-format): a 12-byte header, then entries of 62 bytes
# before the path for SHA-1 (mode at 24, flags at 60), the path NUL-terminated.
_INDEX_HEADER = 12
_ENTRY_MODE = 24
_ENTRY_FLAGS = 60
_ENTRY_PATH = 62
_NAME_MASK = 0xFFF
_GITLINK_MODE = (0o160000).to_bytes(4, "big")
_MAX_INDEX_BYTES = 1 << 30


def _scanned_facts(raw: Any, path: str) -> _IndexFacts | None:
    """The facts of a version-2 SHA-1 index from its bytes; None for any other."""
    from pygit2.ffi import C, ffi

    data = _read_index(path)
    if data is None:
        return None
    count = C.git_index_entrycount(raw)
    if (
        len(data) < _INDEX_HEADER
        or data[:4] != b"DIRC"
        or int.from_bytes(data[4:8], "big") != 2
        or int.from_bytes(data[8:12], "big") != count
    ):
        return None
    facts = _IndexFacts(index=raw)
    if C.git_index_has_conflicts(raw):
        facts.stages = _conflicts(raw)

    def stage_zero(path: bytes) -> Any:
        entry = C.git_index_get_bypath(raw, path, 0)
        return None if entry == ffi.NULL else entry

    for name, found in ((b".gitattributes", facts.attributes), (b".gitignore", facts.ignores)):
        for candidate in sorted(_paths_ending(data, name)):
            if stage_zero(candidate) is not None:
                found.append(candidate)
    start = data.find(_GITLINK_MODE, _INDEX_HEADER)
    while start >= 0:
        gitlink = _path_at(data, start - _ENTRY_MODE)
        entry = None if gitlink is None else stage_zero(gitlink)
        if gitlink is not None and entry is not None and entry.mode == _GITLINK:
            facts.gitlinks[gitlink] = bytes(ffi.buffer(entry.id.id, 20)).hex().encode()
        start = data.find(_GITLINK_MODE, start + 1)
    return facts


def _read_index(path: str) -> bytes | None:
    """The index file's bytes (a regular file, not a link, at most 1 GiB), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_INDEX_BYTES:
            return None
        chunks: list[bytes] = []
        left = info.st_size
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _path_at(data: bytes, entry: int) -> bytes | None:
    """The path of the version-2 entry that starts at ``entry``, if one could."""
    if entry < _INDEX_HEADER:
        return None
    begin = entry + _ENTRY_PATH
    end = data.find(b"\0", begin)
    if end <= begin:
        return None
    return data[begin:end]


def _paths_ending(data: bytes, name: bytes) -> set[bytes]:
    """The candidates for every path in a version-2 index that is ``name`` or ends in
    ``/name``: where ``name`` + NUL occurs, a run of the non-NUL bytes before it whose
    length the two flag bytes before the run give (libgit2 confirms them)."""
    found: set[bytes] = set()
    suffix = name + b"\0"
    end = data.find(suffix, _INDEX_HEADER)
    while end >= 0:
        stop = end + len(name)
        floor = max(_INDEX_HEADER + _ENTRY_PATH, data.rfind(b"\0", 0, end) + 1)
        for begin in range(end, floor - 1, -1):
            path = data[begin:stop]
            flags = int.from_bytes(data[begin - 2 : begin], "big")
            if flags & _NAME_MASK == min(len(path), _NAME_MASK) and (
                path == name or path.endswith(b"/" + name)
            ):
                found.add(path)
        end = data.find(suffix, end + 1)
    return found


def _conflicts(raw: Any) -> dict[bytes, int]:
    """Conflicted paths and their stage masks, from libgit2's conflict iterator."""
    from pygit2.ffi import C, ffi

    stages: dict[bytes, int] = {}
    iterator = ffi.new("git_index_conflict_iterator **")
    if C.git_index_conflict_iterator_new(iterator, raw) != 0:
        raise _Unavailable("the index's conflicts cannot be read")
    sides = [ffi.new("git_index_entry **") for _ in range(3)]
    try:
        while C.git_index_conflict_next(*sides, iterator[0]) == 0:
            for bit, side in enumerate(sides):
                if side[0] != ffi.NULL:
                    path = ffi.string(side[0].path)
                    stages[path] = stages.get(path, 0) | (1 << bit)
    finally:
        C.git_index_conflict_iterator_free(iterator[0])
    return stages


def _check_drivers(
    repo: pygit2.Repository, facts: _IndexFacts, untracked: Sequence[bytes], workdir: str
) -> None:
    """Refuse when the attributes name a driver git would run (or an encoding)."""
    config = repo.config
    names = {b".gitattributes", *facts.attributes}
    names.update(path for path in untracked if path.endswith(b".gitattributes"))
    files = [os.path.join(workdir, os.fsdecode(path)) for path in sorted(names)]
    files.append(os.path.join(repo.path, "info", "attributes"))
    global_file = _config_value(config, "core.attributesFile")
    if global_file:
        files.append(os.path.expanduser(global_file))
    for path in files:
        try:
            text = _read_small(path, 1 << 20)
        except OSError:
            continue
        for kind, value in _ATTRIBUTE_DRIVER.findall(text):
            name = value.decode("utf-8", "replace")
            if kind == b"working-tree-encoding":
                raise _Unavailable(
                    "the repository's attributes use working-tree-encoding, not reproduced"
                )
            if any(_config_value(config, f"filter.{name}.{key}") for key in ("clean", "process")):
                raise _Unavailable(
                    f"the repository's attributes use the filter driver {name!r}, whose "
                    "command git: variables never run"
                )


def _check_ignore_files(facts: _IndexFacts, untracked: Sequence[bytes], workdir: str) -> None:
    """Refuse when a ``.gitignore`` in the work tree is a symbolic link: git (since
    2.32) does not follow one, libgit2 does (and, confined, cannot where it leads
    outside the roots), so the status would not be git's."""
    names = {b".gitignore", *facts.ignores}
    names.update(path for path in untracked if path.endswith(b".gitignore"))
    for path in sorted(names):
        if os.path.islink(os.path.join(workdir, os.fsdecode(path))):
            raise _Unavailable(
                f"{os.fsdecode(path)} is a symbolic link, which git does not follow "
                "(git 2.32 and later); not reproduced"
            )


@dataclass
class _Line:
    index: str = " "
    worktree: str = " "
    source: bytes | None = None


def _quote(path: bytes, quote_fully: bool) -> bytes:
    """git's quote_path with QUOTE_PATH_QUOTE_SP: C-style, and quoted when spaced."""
    out = bytearray()
    quoted = False
    for byte in path:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
            quoted = True
        elif byte < 0x20 or byte == 0x7F or (byte >= 0x80 and quote_fully):
            short = {7: b"a", 8: b"b", 9: b"t", 10: b"n", 11: b"v", 12: b"f", 13: b"r"}
            out += b"\\" + short.get(byte, b"%03o" % byte)
            quoted = True
        else:
            out.append(byte)
    if quoted or b" " in path:
        return b'"' + bytes(out) + b'"'
    return bytes(out)


def relative_path(path: bytes, prefix: bytes) -> bytes:
    """git's relative_path for repository paths (``prefix`` ends with ``/``)."""
    if not path:
        return b"./"
    if not prefix:
        return path
    i = j = prefix_off = in_off = 0
    while i < len(prefix) and j < len(path) and prefix[i] == path[j]:
        if prefix[i] == 0x2F:
            while i < len(prefix) and prefix[i] == 0x2F:
                i += 1
            while j < len(path) and path[j] == 0x2F:
                j += 1
            prefix_off, in_off = i, j
        else:
            i += 1
            j += 1
    if i >= len(prefix) and prefix_off < len(prefix):
        if j >= len(path):
            in_off = len(path)
        elif path[j] == 0x2F:
            while j < len(path) and path[j] == 0x2F:
                j += 1
            in_off = j
        else:
            i = prefix_off
    elif j >= len(path) and in_off < len(path) and i < len(prefix) and prefix[i] == 0x2F:
        while i < len(prefix) and prefix[i] == 0x2F:
            i += 1
        in_off = len(path)
    rest = path[in_off:]
    if i >= len(prefix):
        return rest or b"./"
    ups = bytearray()
    while i < len(prefix):
        if prefix[i] == 0x2F:
            ups += b"../"
            while i < len(prefix) and prefix[i] == 0x2F:
                i += 1
            continue
        i += 1
    if prefix[-1] != 0x2F:
        ups += b"../"
    return bytes(ups) + rest


@dataclass
class _Status:
    changes: dict[bytes, _Line]
    untracked: list[bytes]


def _file_type(mode: int) -> int:
    return stat.S_IFMT(mode)


def _head_tree(repo: pygit2.Repository) -> pygit2.Tree | None:
    if repo.head_is_unborn:
        return None
    return repo.head.peel(pygit2.Tree)


def _collect(repo: pygit2.Repository, workdir: str, roots: Sequence[str], depth: int) -> _Status:
    """The change and untracked entries of ``repo`` (paths from the work tree's top)."""
    _confine_status_files(repo, roots)
    settings = _settings(repo.config)
    index = repo.index
    tree = _head_tree(repo)
    facts = _index_facts(index, repo.path, loop=tree is None)
    changes: dict[bytes, _Line] = {}

    def line(path: bytes) -> _Line:
        return changes.setdefault(path, _Line())

    # The index against HEAD.
    if tree is None:
        for path in facts.paths:
            if path not in facts.intent_to_add:
                line(path).index = "A"
    else:
        staged = index.diff_to_tree(tree, flags=DiffOption.INCLUDE_TYPECHANGE)
        if settings.renames:
            staged.find_similar(flags=DiffFind.FIND_RENAMES, rename_limit=settings.rename_limit)
        deltas = list(staged.deltas)
        # git never takes a rename's source from a path that is still in the index (its
        # status uses no break detection); libgit2 splits a type change into a deletion
        # and an addition and may pair that deletion. Such a path is changed in place.
        added = {d.new_file.raw_path: d for d in deltas if d.status == DeltaStatus.ADDED}
        kept = {
            d.old_file.raw_path: d
            for d in deltas
            if d.status == DeltaStatus.RENAMED and d.old_file.raw_path in added
        }
        for path, delta in kept.items():
            retyped = _file_type(delta.old_file.mode) != _file_type(added[path].new_file.mode)
            line(path).index = "T" if retyped else "M"
            line(delta.new_file.raw_path).index = "A"
        for delta in deltas:
            old, new = delta.old_file.raw_path, delta.new_file.raw_path
            if delta.status == DeltaStatus.CONFLICTED or new in facts.stages:
                continue
            if old in kept and delta.status in (DeltaStatus.RENAMED, DeltaStatus.ADDED):
                continue
            if new in facts.intent_to_add:
                if delta.status == DeltaStatus.RENAMED:
                    line(old).index = "D"
                continue
            char = _DELTA_CHAR.get(delta.status)
            if char is None:
                continue
            entry = line(new)
            entry.index = char
            if char == "R":
                entry.source = old

    # The work tree against the index.
    flags = DiffOption.INCLUDE_TYPECHANGE | DiffOption.IGNORE_SUBMODULES
    if settings.untracked != "no":
        flags |= DiffOption.INCLUDE_UNTRACKED
        if settings.untracked == "all":
            flags |= DiffOption.RECURSE_UNTRACKED_DIRS
    untracked: list[bytes] = []
    deleted: list[bytes] = []
    for delta in index.diff_to_workdir(flags=flags).deltas:
        path = delta.new_file.raw_path
        if delta.status == DeltaStatus.UNTRACKED:
            untracked.append(path)
            continue
        if (
            path in facts.stages
            or path in facts.intent_to_add
            or path in facts.gitlinks
            or facts.is_unchanged(path)
            or delta.status == DeltaStatus.CONFLICTED
        ):
            continue
        char = _DELTA_CHAR.get(delta.status)
        if char is not None:
            line(path).worktree = char
            if char == "D":
                deleted.append(path)

    _check_drivers(repo, facts, untracked, workdir)
    _check_ignore_files(facts, untracked, workdir)

    # Intent-to-add entries: added in the work tree (or gone from it), never staged.
    for path in facts.intent_to_add:
        exists = os.path.lexists(os.path.join(workdir, os.fsdecode(path)))
        line(path).worktree = "A" if exists else "D"
        if not exists:
            deleted.append(path)
    if settings.renames and facts.intent_to_add and deleted:
        raise _Unavailable(
            "intent-to-add files beside deleted ones may be shown as renames by git, "
            "which is not reproduced"
        )

    for path, commit in facts.gitlinks.items():
        if facts.is_unchanged(path):
            continue
        char = _submodule_char(repo, workdir, path, commit, roots, depth)
        if char:
            line(path).worktree = char

    for path, mask in facts.stages.items():
        entry = line(path)
        code = _CONFLICT[mask]
        entry.index, entry.worktree = code[0], code[1]
        entry.source = None
    return _Status(changes, untracked)


def _submodule_ignore(repo: pygit2.Repository, workdir: str, path: bytes) -> str:
    """submodule.<name>.ignore, from the repository's config or ``.gitmodules``."""
    name: str | None = None
    modules = os.path.join(workdir, ".gitmodules")
    values: dict[str, str] = {}
    if os.path.isfile(modules) and not os.path.islink(modules):
        try:
            for entry in pygit2.Config(modules):
                values[entry.name] = entry.value or ""
        except (pygit2.GitError, OSError, ValueError):
            values = {}
    decoded = os.fsdecode(path)
    for key, value in values.items():
        if key.startswith("submodule.") and key.endswith(".path") and value == decoded:
            name = key[len("submodule.") : -len(".path")]
            break
    if name is None:
        return "none"
    key = f"submodule.{name}.ignore"
    return _config_value(repo.config, key) or values.get(key) or "none"


def _submodule_char(
    repo: pygit2.Repository,
    workdir: str,
    path: bytes,
    commit: bytes,
    roots: Sequence[str],
    depth: int,
) -> str:
    """``M`` (new commits), ``m`` (modified content), ``?`` (untracked content), ``D``
    (gone) or nothing, as git 2.39's short format shows a submodule."""
    ignore = _submodule_ignore(repo, workdir, path)
    if ignore == "all":
        return ""
    top = os.path.join(workdir, os.fsdecode(path))
    if not os.path.lexists(top):
        return "D"
    if os.path.islink(top) or not os.path.isdir(top):
        return "T"
    dotgit = os.path.join(top, ".git")
    if not os.path.lexists(dotgit):
        return ""  # not populated: git shows nothing
    if depth >= MAX_SUBMODULE_DEPTH:
        raise _Unavailable("submodules are nested too deeply")
    try:
        found = find_repository_at(top, roots)
    except _Unavailable as exc:
        raise _Unavailable(f"submodule {os.fsdecode(path)}: {exc}") from exc
    try:
        return _submodule_state(found, commit, ignore, roots, depth)
    finally:
        found.repo.free()  # pygit2's Repository is in a reference cycle: free it now


def _submodule_state(
    found: _Found, commit: bytes, ignore: str, roots: Sequence[str], depth: int
) -> str:
    sub = found.repo
    head = "" if sub.head_is_unborn or found.workdir is None else str(sub.head.target)
    if head.encode() != commit:
        return "M"
    if ignore == "dirty" or found.workdir is None:
        return ""
    status = _collect(sub, found.workdir, roots, depth + 1)
    if any(not (entry.index == " " and entry.worktree == "?") for entry in status.changes.values()):
        return "m"
    nested_untracked = any(entry.worktree == "?" for entry in status.changes.values())
    if ignore != "untracked" and (status.untracked or nested_untracked):
        return "?"
    return ""


def find_repository_at(top: str, roots: Sequence[str]) -> _Found:
    """The repository whose work tree top is ``top`` (a submodule), confined."""
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit) and not os.path.islink(dotgit):
        gitdir = dotgit
    else:
        gitdir = _gitfile_target(dotgit, roots)
    _confine_gitdir(gitdir, roots)
    return _found(_open(top, roots), tuple(roots))


def read_status(found: _Found, directory: str, limit: int) -> Value:
    if found.workdir is None:
        return Missing("the repository has no work tree here (it is bare, or this is .git)")
    repo = found.repo
    status = _collect(repo, found.workdir, found.roots, depth=0)
    settings = _settings(repo.config)
    prefix = b""
    if settings.relative and directory != found.workdir and is_inside(directory, found.workdir):
        prefix = os.fsencode(os.path.relpath(directory, found.workdir)) + b"/"

    def show(path: bytes) -> bytes:
        return _quote(relative_path(path, prefix), settings.quote_fully)

    lines: list[bytes] = []
    size = 0
    for path in sorted(status.changes):
        entry = status.changes[path]
        if entry.index == " " and entry.worktree == " ":
            continue
        text = f"{entry.index}{entry.worktree} ".encode()
        if entry.source is not None:
            text += show(entry.source) + b" -> "
        lines.append(text + show(path))
        size += len(lines[-1]) + 1
        if size > limit + 1:
            return _too_large(limit)
    for path in sorted(status.untracked):
        lines.append(b"?? " + show(path))
        size += len(lines[-1]) + 1
        if size > limit + 1:
            return _too_large(limit)
    output = b"\n".join(lines)
    if len(output) > limit:
        return _too_large(limit)
    try:
        return output.decode("utf-8")
    except UnicodeDecodeError:
        return Missing(
            "the git status is not UTF-8 (a file name is not, and core.quotePath is off)"
        )


def _too_large(limit: int) -> Missing:
    return Missing(f"the git status is larger than the {limit}-byte limit (max_file_bytes)")


# --- 3. the read, in a worker process ---------------------------------------------------


def read_repository(
    names: Sequence[str],
    directory: str,
    options: ResolverOptions,
    publish: Callable[[str, Value], None],
) -> None:
    """Read ``names`` in this process (no time limit here: a worker runs it), publishing
    each value as soon as it is known; never raises but :class:`MemoryError`."""
    try:
        found = find_repository(directory, options)
    except _Unavailable as exc:
        for name in names:
            publish(name, Missing(str(exc)))
        return
    try:
        for number, name in enumerate(names, 1):
            value = _read_value(found, name, directory, options)
            if number == len(names):
                found.repo.free()  # before the last answer: the memory is given back
            publish(name, value)
    finally:
        found.repo.free()


def _read_value(found: _Found, name: str, directory: str, options: ResolverOptions) -> Value:
    try:
        if name == "branch":
            return read_branch(found.repo)
        return read_status(found, directory, options.max_file_bytes)
    except _Unavailable as exc:
        return Missing(str(exc))
    except (pygit2.GitError, OSError, KeyError, ValueError) as exc:
        if "out of memory" in str(exc).lower():  # libgit2's own: the worker's limit
            raise MemoryError(str(exc)) from exc
        return Missing(f"the repository cannot be read: {describe_error(exc)}")


def _directory(context: ResolveContext) -> str | Missing:
    directory = context.directory
    if directory is None:
        return Missing("no working directory was given")
    if not os.path.isdir(directory):
        return Missing("the working directory is not a directory")
    return directory


def worker_spec(directory: str, options: ResolverOptions) -> WorkerSpec:
    """What the worker that reads ``directory`` is confined to (see step 3)."""
    roots = git_roots(directory, options)
    return WorkerSpec.of(
        roots,
        memory_limit=options.git_memory_limit,
        landlock=options.git_landlock,
        search_paths=_search_paths(roots),
        allow_unconfined=options.git_allow_unconfined,
        recycle_bytes=options.git_recycle_bytes,
    )


def _search_paths(roots: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """libgit2's global configuration levels that lie inside ``roots``: ``global``
    (``$HOME``, for ``.gitconfig``) and ``xdg`` (``$XDG_CONFIG_HOME/git`` or
    ``~/.config/git``, for ``config``, ``ignore`` and ``attributes``)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    levels = (
        ("global", home, (".gitconfig",)),
        ("xdg", os.path.join(xdg, "git"), ("config", "ignore", "attributes")),
    )
    found: list[tuple[str, str]] = []
    for level, folder, files in levels:
        if not os.path.isabs(folder):
            continue
        paths = [folder, *(os.path.join(folder, name) for name in files)]
        if all(_inside_if_present(path, roots) for path in paths):
            found.append((level, os.path.realpath(folder)))
    return tuple(found)


def _inside_if_present(path: str, roots: Sequence[str]) -> bool:
    if not os.path.lexists(path):
        return True
    real = os.path.realpath(path)
    return any(is_inside(real, root) for root in roots)


def _values(names: Sequence[str], exchange: Exchange, options: ResolverOptions) -> dict[str, Value]:
    """The values a worker gave, and for the others why there are none."""
    values: dict[str, Value] = {}
    refused: str | None = None
    for message in exchange.messages:
        if isinstance(message.get("refused"), str):  # an unconfined reader read nothing
            refused = message["refused"]
        name = message.get("name")
        if not isinstance(name, str) or name not in names:
            continue
        if isinstance(message.get("value"), str):
            values[name] = message["value"]
        elif isinstance(message.get("missing"), str):
            values[name] = Missing(message["missing"])
    timeout = options.git_timeout
    rest: Missing
    if refused is not None:
        rest = Missing(refused)
    elif exchange.outcome is Outcome.BUSY:
        queued = options.git_queue_timeout
        rest = Busy(
            f"busy: all {options.git_workers} git readers stayed busy for the {queued:g}s "
            "a read may queue; try again shortly",
            retry_after=float(max(1, math.ceil(timeout))),
        )
    elif exchange.outcome is Outcome.TIMED_OUT:
        rest = Missing(f"git timed out after {timeout:g}s")
    elif exchange.outcome is Outcome.FAILED:
        rest = Missing(f"the repository cannot be read: {exchange.reason}")
    else:
        rest = Missing("the git reader gave no value")
    return {name: values.get(name, rest) for name in names}


class GitResolver(Resolver):
    """Reads ``git:`` values in the worker processes of its pool (step 3)."""

    type = "git"
    batch = True

    def __init__(self, pool: WorkerPool | None = None) -> None:
        self.pool = WorkerPool() if pool is None else pool

    def variables(self) -> Sequence[VariableInfo]:
        return VARIABLES

    def resolve(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        wanted = tuple(dict.fromkeys(names))
        values: dict[str, Value] = {
            name: Missing("unknown variable") for name in wanted if name not in NAMES
        }
        known = [name for name in wanted if name in NAMES]
        if known:
            values.update(self._read(known, context))
        return values

    def _read(self, names: Sequence[str], context: ResolveContext) -> dict[str, Value]:
        directory = _directory(context)
        if isinstance(directory, Missing):
            return dict.fromkeys(names, directory)
        options = context.options
        request = {
            "names": list(names),
            "directory": directory,
            "max_file_bytes": options.max_file_bytes,
        }
        exchange = self.pool.run(
            worker_spec(directory, options),
            request,
            size=options.git_workers,
            timeout=options.git_timeout,
            queue_timeout=options.git_queue_timeout,
            max_message_bytes=_MESSAGE_BYTES_PER_FILE_BYTE * options.max_file_bytes + 65536,
        )
        return _values(names, exchange, options)


# A status of max_file_bytes bytes in JSON: at most six bytes per byte (\u00XX).
_MESSAGE_BYTES_PER_FILE_BYTE = 6


def register(registry_builder: RegistryBuilder) -> None:
    registry_builder.register(GitResolver())
