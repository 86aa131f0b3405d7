"""The library as a file tree (export and import), as pure data: bytes in, records out.

The tree is the layout of llxprt-style prompt directories:

* ``system-prompt.md`` — the root template (a record whose ``name`` is ``None``);
* ``<name>.md`` — the default variant of fragment ``<name>`` (``env/git-repository.md``);
* ``providers/<p>/<name>.md`` — its variant for provider ``<p>``;
* ``providers/<p>/models/<m>/<name>.md`` — its variant for provider ``<p>``, model ``<m>``;
* ``sysprompt.json`` — per-file settings, ``{"files": {"<path>": {"compress": bool,
  "defaults": {name: value}, "strategy": "append" | "prepend"}}}``; a file without
  settings (or a key left out) gets the defaults (``false``, ``{}``, ``append``).

``parse_tree(files, settings_json)`` turns ``{path: bytes}`` into a :class:`ParsedTree`:
the records, sorted by path, and every refusal with its path and reason (it never stops
at the first: an import is all-or-nothing, and its report lists them all). Provider and
model folders are matched normalised (``providers/OpenAI/models/GPT 5`` is
``openai``/``gpt-5``). ``render_tree(records)`` is the inverse:
``parse_tree(render_tree(records)) == ParsedTree(records)`` (a parsed record also
remembers the path it was ``found_at``, which equality ignores); ``tree_settings``
checks the layout and writes ``sysprompt.json`` alone, without any text. Reading directories and
zip files (and refusing symlinks) is the caller's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sysprompt_core.errors import InvalidFragmentName, InvalidOverride, InvalidVariantKey
from sysprompt_core.library.names import fragment_name_check, normalize_key
from sysprompt_core.library.overrides import (
    DEFAULT_STRATEGY,
    Strategy,
    check_strategy,
    check_variables,
)
from sysprompt_core.library.variants import VariantKey
from sysprompt_core.limits import DEFAULT_MAX_TEMPLATE_BYTES

ROOT_TEMPLATE_PATH = "system-prompt.md"
SETTINGS_PATH = "sysprompt.json"
SUFFIX = ".md"

PATH = re.compile(
    r"""
    (?:
        providers / (?P<provider> [^/]+ ) /
        (?: models / (?P<model> [^/]+ ) / )?    # a model's folder, when a name follows it
    )?
    (?P<name> .+ ) \.md
    """,
    re.VERBOSE | re.DOTALL,
)
"""Splits the path of a fragment's file (checked safe, ending in ``.md``) into provider,
model and name: ``providers/p/models/m/core.md`` is (p, m, core), and
``providers/p/models/x.md`` is (p, —, models/x)."""

_DRIVE = re.compile(r"[A-Za-z]:")
_SETTINGS_KEYS = ("compress", "defaults", "strategy")


@dataclass(frozen=True)
class TreeEntry:
    """One file of the tree, decoded: its path and its text."""

    path: str
    text: str


@dataclass(frozen=True)
class TreeRecord:
    """The root template (``name`` ``None``) or one variant of a fragment, with its
    settings."""

    name: str | None
    provider: str | None
    model: str | None
    text: str
    compress: bool = False
    defaults: Mapping[str, str] = field(default_factory=dict, hash=False)
    strategy: Strategy = DEFAULT_STRATEGY
    found_at: str | None = field(default=None, compare=False)
    """The path of the file the record was read from, as written in the tree
    (``providers/Gemini/models/gemini-2.5-flash/core.md``), when it was read from one;
    :attr:`path` is where the record lives in the layout, its folders normalised."""

    def __post_init__(self) -> None:
        key = VariantKey(self.provider, self.model)
        if self.name is None and key != VariantKey():
            raise InvalidVariantKey("The root template has no provider or model variants.")
        if self.name is not None:
            fragment_name_check(self.name)
        object.__setattr__(self, "provider", key.provider)
        object.__setattr__(self, "model", key.model)
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))

    @property
    def path(self) -> str:
        """Where the record lives in the tree."""
        if self.name is None:
            return ROOT_TEMPLATE_PATH
        folder = ""
        if self.provider is not None:
            folder = f"providers/{self.provider}/"
            if self.model is not None:
                folder += f"models/{self.model}/"
        return f"{folder}{self.name}{SUFFIX}"

    def settings(self) -> dict[str, object]:
        """The settings that differ from the defaults, as ``sysprompt.json`` holds them."""
        settings: dict[str, object] = {}
        if self.compress:
            settings["compress"] = True
        if self.defaults:
            settings["defaults"] = dict(sorted(self.defaults.items()))
        if self.strategy != DEFAULT_STRATEGY:
            settings["strategy"] = self.strategy
        return settings


@dataclass(frozen=True)
class Refusal:
    """A file that cannot be imported, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class ParsedTree:
    """The records of a tree, sorted by path, and every refusal (empty: all is well)."""

    records: tuple[TreeRecord, ...] = ()
    refusals: tuple[Refusal, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refusals


def parse_tree(
    files: Mapping[str, bytes],
    settings_json: bytes | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_TEMPLATE_BYTES,
) -> ParsedTree:
    """Parse a file tree (see the module docstring). ``sysprompt.json`` may be passed as
    ``settings_json`` or among ``files``; files over ``max_bytes`` are refused."""
    refusals: list[Refusal] = []
    if SETTINGS_PATH in files:
        if settings_json is not None and settings_json != files[SETTINGS_PATH]:
            refusals.append(Refusal(SETTINGS_PATH, "given twice, with different contents."))
        settings_json = files[SETTINGS_PATH]
    settings = _parse_settings(settings_json, refusals)
    records: dict[tuple[str | None, VariantKey], TreeRecord] = {}
    seen: dict[tuple[str | None, VariantKey], str] = {}
    for path in sorted(files):
        if path == SETTINGS_PATH or (path.endswith("/") and not files[path]):
            continue  # the settings, or a zip file's entry for a folder
        entry = _entry(path, files[path], max_bytes, refusals)
        key = _key(path, refusals) if entry is not None else None
        if entry is None or key is None:
            continue
        if key in seen:
            refusals.append(Refusal(path, f"the same variant as {seen[key]}."))
            continue
        seen[key] = path
        record = _record(entry, key, settings.pop(path, {}), refusals)
        if record is not None:
            records[key] = record
    for path in settings:
        if path not in files:
            refusals.append(
                Refusal(SETTINGS_PATH, f"settings for {path!r}, which is not in the tree.")
            )
    ordered = sorted(records.values(), key=lambda record: record.path)
    return ParsedTree(tuple(ordered), tuple(refusals))


def render_tree(records: Iterable[TreeRecord]) -> dict[str, bytes]:
    """The file tree of ``records``, ``sysprompt.json`` included. Raises ``ValueError``
    for two records at one path, or a record that the layout cannot tell apart from
    another (a default variant named ``system-prompt`` or ``providers/…``, a provider
    variant named ``models/<m>/…``)."""
    records = list(records)
    files = {record.path: record.text.encode("utf-8") for record in records}
    files[SETTINGS_PATH] = tree_settings(records)
    return files


def tree_settings(records: Iterable[TreeRecord]) -> bytes:
    """``sysprompt.json`` of ``records``: what :func:`render_tree` writes beside their
    files, checking the layout the same way (``ValueError``). Reads no text, so an
    export can check the whole tree and write its settings before it reads one
    file's text."""
    seen: set[str] = set()
    settings: dict[str, dict[str, object]] = {}
    for record in records:
        path = record.path
        if path in seen:
            raise ValueError(f"two records at {path}")
        if _key(path, []) != (record.name, VariantKey(record.provider, record.model)):
            raise ValueError(f"{path} would read back as another variant")
        seen.add(path)
        if record.settings():
            settings[path] = record.settings()
    document = {"files": dict(sorted(settings.items()))}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _entry(path: str, data: bytes, max_bytes: int, refusals: list[Refusal]) -> TreeEntry | None:
    """The decoded file, or ``None`` after adding its refusal."""
    reason = _unsafe(path)
    if reason is None and len(data) > max_bytes:
        reason = f"{len(data):,} bytes; a file may have at most {max_bytes:,}."
    if reason is None and b"\x00" in data:
        reason = "holds a NUL byte: not a text file."
    if reason is None:
        try:
            return TreeEntry(path, data.decode("utf-8"))
        except UnicodeDecodeError as error:
            reason = f"not UTF-8 text (byte {error.start:,} is not valid)."
    refusals.append(Refusal(path, reason))
    return None


def _unsafe(path: str) -> str | None:
    """Why ``path`` may not be written under the tree's folder, or ``None``."""
    segments = path.split("/")
    if not path:
        return "an empty path."
    if "\\" in path:
        return "holds a backslash: paths in the tree use '/'."
    if "\x00" in path:
        return "holds a NUL character."
    if path.startswith("/") or _DRIVE.match(path):
        return "an absolute path: paths in the tree are relative to its top."
    if "." in segments or ".." in segments:
        return "holds '.' or '..' as a folder: paths may not leave the tree."
    if "" in segments:
        return "holds an empty folder name ('//', or '/' at the end)."
    return None


def _key(path: str, refusals: list[Refusal]) -> tuple[str | None, VariantKey] | None:
    """The (name, variant) a file's path stands for, or ``None`` after adding a refusal."""
    if path == ROOT_TEMPLATE_PATH:
        return None, VariantKey()
    if not path.endswith(SUFFIX):
        where = "a file at the top" if "/" not in path else "a file"
        refusals.append(
            Refusal(
                path,
                f"{where} that is not part of the layout: the tree holds "
                f"{ROOT_TEMPLATE_PATH}, {SETTINGS_PATH} and fragments as <name>.md, "
                "providers/<provider>/<name>.md or "
                "providers/<provider>/models/<model>/<name>.md.",
            )
        )
        return None
    match = PATH.fullmatch(path)
    if match is None or (path.startswith("providers/") and match["provider"] is None):
        refusals.append(
            Refusal(
                path,
                "a provider's variant is providers/<provider>/<name>.md or "
                "providers/<provider>/models/<model>/<name>.md.",
            )
        )
        return None
    try:
        name = fragment_name_check(match["name"])
        key = VariantKey(_folder(match["provider"]), _folder(match["model"]))
    except (InvalidFragmentName, InvalidVariantKey) as error:
        refusals.append(Refusal(path, str(error)))
        return None
    return name, key


def _folder(text: str | None) -> str | None:
    if text is not None and not normalize_key(text):
        raise InvalidVariantKey(f"The folder {text!r} has no letter or digit.")
    return text


def _record(
    entry: TreeEntry,
    key: tuple[str | None, VariantKey],
    settings: Mapping[str, Any],
    refusals: list[Refusal],
) -> TreeRecord | None:
    name, variant = key
    if name is None and set(settings) - {"compress"}:
        refusals.append(
            Refusal(SETTINGS_PATH, f"{entry.path}: the root template has only 'compress'.")
        )
        return None
    return TreeRecord(
        name,
        variant.provider,
        variant.model,
        entry.text,
        compress=settings.get("compress", False),
        defaults=settings.get("defaults", {}),
        strategy=settings.get("strategy", DEFAULT_STRATEGY),
        found_at=entry.path,
    )


def _parse_settings(data: bytes | None, refusals: list[Refusal]) -> dict[str, dict[str, Any]]:
    """The checked settings by path; each refused entry is reported and left out."""
    if data is None:
        return {}
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        refusals.append(Refusal(SETTINGS_PATH, f"not valid JSON in UTF-8 ({error})."))
        return {}
    shape = '{"files": {"<path>": {"compress"?, "defaults"?, "strategy"?}}}'
    if not isinstance(document, dict) or set(document) - {"files"}:
        refusals.append(Refusal(SETTINGS_PATH, f"expected {shape}."))
        return {}
    files = document.get("files", {})
    if not isinstance(files, dict):
        refusals.append(Refusal(SETTINGS_PATH, f"'files' is an object: expected {shape}."))
        return {}
    checked: dict[str, dict[str, Any]] = {}
    for path, settings in files.items():
        reason = _settings_reason(settings)
        if reason is None:
            checked[path] = settings
        else:
            refusals.append(Refusal(SETTINGS_PATH, f"files.{path}: {reason}"))
            checked[path] = {}
    return checked


def _settings_reason(settings: object) -> str | None:
    """Why one file's settings are refused, or ``None``."""
    if not isinstance(settings, dict):
        return "settings are an object with compress, defaults and strategy."
    unknown = sorted(set(settings) - set(_SETTINGS_KEYS))
    if unknown:
        return f"unknown setting {unknown[0]!r}: the settings are {', '.join(_SETTINGS_KEYS)}."
    if not isinstance(settings.get("compress", False), bool):
        return "compress is true or false."
    try:
        check_variables(settings.get("defaults", {}), "defaults")
        check_strategy(settings.get("strategy", DEFAULT_STRATEGY), "strategy")
    except InvalidOverride as error:
        return str(error)
    return None
