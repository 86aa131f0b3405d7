"""Small, strict readers for settings taken from environment variables.

Each reader names the variable in its error, so a typo in a deployment's environment
fails at start-up with a message a person can act on.
"""

from __future__ import annotations

import io
import json
import os
import re
import tomllib
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key
from dotenv.parser import parse_stream

ENV_FILE_VARIABLE = "SYSPROMPT_ENV_FILE"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def env_str(name: str, default: str, environ: Mapping[str, str] = os.environ) -> str:
    """The variable's value, or ``default`` when it is unset."""
    return environ.get(name, default)


def env_bool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """A yes/no variable: 1/true/yes/on or 0/false/no/off (any case); empty is false."""
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of: true, false, 1, 0, yes, no, on, off."
    )


def env_list(
    name: str, separator: str = ",", environ: Mapping[str, str] = os.environ
) -> list[str] | None:
    """A list split on ``separator``, items stripped, empty items dropped; ``None`` if unset."""
    raw = environ.get(name)
    if raw is None:
        return None
    return [item.strip() for item in raw.split(separator) if item.strip()]


def env_float(name: str, environ: Mapping[str, str] = os.environ) -> float | None:
    """A number, or ``None`` when the variable is unset."""
    raw = environ.get(name)
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number.") from None


def env_int(name: str, environ: Mapping[str, str] = os.environ) -> int | None:
    """A whole number, or ``None`` when the variable is unset."""
    raw = environ.get(name)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None


def local_secret_key(path: Path) -> str:
    """The per-checkout development key kept in ``path``, created on first use.

    The file is created with mode 0600. When it cannot be created (a read-only
    checkout), a fresh key is returned instead: sessions then last one process only.
    """
    return _read_key(path) or _create_key(path)


def _read_key(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _create_key(path: Path) -> str:
    key = get_random_secret_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(path) or key
    except OSError:
        return key
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key + "\n")
    return key


def env_json_object(name: str, environ: Mapping[str, str] = os.environ) -> dict[str, Any] | None:
    """A JSON object given inline (the value starts with ``{``) or in a file the value
    names (``.json``, or ``.toml`` read as TOML); ``None`` when the variable is unset."""
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return None
    text, where = raw, f"{name}"
    if not raw.lstrip().startswith("{"):
        path = Path(raw.strip())
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ImproperlyConfigured(f"{name}: cannot read {str(path)!r}: {error}") from None
        where = f"{name} ({path})"
        if path.suffix == ".toml":
            try:
                return tomllib.loads(text)
            except tomllib.TOMLDecodeError as error:
                raise ImproperlyConfigured(f"{where} is not valid TOML: {error}") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ImproperlyConfigured(f"{where} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{where} must be a JSON object.")
    return value


def env_file_load(default: Path, environ: MutableMapping[str, str] = os.environ) -> Path | None:
    """Fill ``environ`` from a file of ``NAME=value`` lines where it has no value (the
    environment wins); the file read, or ``None``.

    The file is the one ``SYSPROMPT_ENV_FILE`` names (set but empty: none), else
    ``default`` when it exists, except in a test run (pytest sets ``PYTEST_VERSION`` for
    its process and those it starts): a developer's ``.env`` must not change the tests.
    A line that is not a setting, a comment or blank is refused with its number (never
    its text: it may hold a key).
    """
    named = environ.get(ENV_FILE_VARIABLE)
    if named is None:
        if environ.get("PYTEST_VERSION") is not None or not default.is_file():
            return None
        path, where = default, str(default)
    elif not named.strip():
        return None
    else:
        path = Path(named.strip()).expanduser()
        where = f"{ENV_FILE_VARIABLE}={named.strip()}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ImproperlyConfigured(f"{where}: cannot read the settings file: {error}") from None
    for name, value in env_file_values(text, str(path)).items():
        environ.setdefault(name, value)
    return path


def env_file_values(text: str, where: str) -> dict[str, str]:
    """The settings of a ``.env`` file's text, read by python-dotenv's parser:
    ``NAME=value``, ``export NAME=value``, values in single quotes (as written) or double
    quotes (escapes, several lines), ``#`` comments; no ``${VAR}`` expansion."""
    values: dict[str, str] = {}
    for binding in parse_stream(io.StringIO(text)):
        text_read = binding.original.string  # blank lines before it are part of it
        line = binding.original.line + text_read[: len(text_read) - len(text_read.lstrip())].count(
            "\n"
        )
        if binding.error:
            raise ImproperlyConfigured(
                f"{where}, line {line}: not a setting; write NAME=value (the value in "
                "quotes if it has spaces or #), a comment starting with #, or a blank line."
            )
        if binding.key is None:
            continue
        if not _NAME.fullmatch(binding.key):
            raise ImproperlyConfigured(
                f"{where}, line {line}: {binding.key!r} is not a variable name "
                "(letters, digits and _, not starting with a digit)."
            )
        if binding.value is None:
            raise ImproperlyConfigured(
                f"{where}, line {line}: {binding.key} has no value; write "
                f"{binding.key}=value ({binding.key}= for an empty one)."
            )
        values[binding.key] = binding.value
    return values
