"""Resolve a template for a working directory and print the system prompt.

``--cwd`` is checked as the API and the editor check a conversation's cwd
(``validation.cwd_check``): a directory outside the allowed roots is refused with the
same message and exit status 1, rather than printing a prompt whose ``git:`` and
``file:`` values silently do not exist. The values are then resolved as the server
resolves them: in the checked directory, only the host-local types ``SERVER_RESOLVES``
lists (when it leaves out ``git`` or ``file``, stderr says so).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from sysprompt.conf import app_settings, resolver_options
from sysprompt.errors import InvalidInput
from sysprompt.library.selectors import DatabaseSource, library_source
from sysprompt.prompts import selectors
from sysprompt.prompts.validation import DIRECTORY_TYPES, CheckedCwd, cwd_check
from sysprompt_core.library import compress, library_lint
from sysprompt_core.template import Diagnostic, compile
from sysprompt_core.variables import ResolveContext, default_registry, resolve_prompt


class Command(BaseCommand):
    help = (
        "Print the system prompt a template resolves to for a conversation in --cwd (with "
        "the library's fragments, and --provider, --tool and --var as a host gives them): the "
        "saved current template (the built-in default when none is saved), --template FILE "
        "or --default-template. --cwd must lie inside the allowed roots "
        "(SYSPROMPT_ALLOWED_ROOTS), as for the API. Lint diagnostics go to stderr; the "
        "prompt goes to stdout exactly as resolved (nothing at all when there is no prompt)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cwd",
            required=True,
            help="the conversation's working directory, inside the allowed roots",
        )
        parser.add_argument("--model", help="the model name ([prompt:model])")
        parser.add_argument("--conversation-id", help="the conversation id")
        parser.add_argument("--provider", help="the provider ([prompt:provider], variants)")
        parser.add_argument(
            "--tool", action="append", default=[], metavar="NAME", help="an enabled tool"
        )
        parser.add_argument(
            "--var",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a host-supplied value for [var:NAME]",
        )
        which = parser.add_mutually_exclusive_group()
        which.add_argument(
            "--template",
            metavar="FILE",
            help="a UTF-8 template file (default: the saved current template)",
        )
        which.add_argument(
            "--default-template",
            action="store_true",
            help="the built-in default (the DEFAULT_TEMPLATE setting), even when one is saved",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        cwd = _directory(options["cwd"])
        resolves = app_settings().server_resolves
        skipped = sorted(DIRECTORY_TYPES - resolves)
        if skipped:
            self.stderr.write(
                f"note: SERVER_RESOLVES leaves out {', '.join(skipped)}: this server resolves "
                f"no {' or '.join(f'{kind}:' for kind in skipped)} values (agent hosts supply "
                "them), so they do not exist here."
            )
        source, compressed = _template_source(
            options["template"], default=options["default_template"]
        )
        library = self._library()
        for diagnostic in library_lint(
            source,
            library=library,
            provider=options["provider"],
            model=options["model"],
            registry=default_registry(),
        ):
            self.stderr.write(_format(diagnostic))
        context = ResolveContext(
            cwd=str(cwd),
            directory=cwd.real,
            server_resolves=resolves,
            model=options["model"],
            conversation_id=options["conversation_id"],
            options=resolver_options(),
            provider=options["provider"],
            tools=frozenset(options["tool"]),
            variables=_variables(options["var"]),
            library=library,
        )
        text = compress(source) if compressed else source
        prompt = resolve_prompt(compile(text), context, default_registry()).prompt
        if prompt is not None:
            self.stdout.write(prompt, ending="")

    def _library(self) -> DatabaseSource | None:
        """The library, or None (with a warning) when the database cannot be read: a
        ``--template`` file then still renders, with no fragments."""
        library = library_source()
        try:
            library.names()
        except DatabaseError as error:
            self.stderr.write(
                f"warning: the library cannot be read ({error}); fragments do not exist. "
                "Run `manage.py migrate`."
            )
            return None
        return library


def _directory(path: str) -> CheckedCwd:
    """``--cwd`` as an absolute path checked like an API call's ``cwd``."""
    if not os.path.isdir(path):
        raise CommandError(f"--cwd {path!r} is not an existing directory.")
    try:
        return cwd_check(os.path.abspath(path))
    except InvalidInput as error:
        raise CommandError(f"--cwd {error.message}") from None


def _variables(pairs: list[str]) -> dict[str, str]:
    variables: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise CommandError(f"--var {pair!r} is not NAME=VALUE.")
        variables[name] = value
    return variables


def _template_source(path: str | None, *, default: bool) -> tuple[str, bool]:
    """The template's text, and whether it is compressed before parsing."""
    if default:
        return app_settings().default_template, False
    if path is None:
        return _saved_template()
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read(), False
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"Cannot read template {path!r}: {error}") from error


def _saved_template() -> tuple[str, bool]:
    """The current template, as new conversations get it; the default when none is saved."""
    try:
        current = selectors.template_current()
        return current.text, current.compress
    except DatabaseError as error:
        raise CommandError(
            f"Cannot read the saved template from the database ({error}); run "
            "`manage.py migrate`, or pass --default-template or --template FILE."
        ) from error


def _format(diagnostic: Diagnostic) -> str:
    return f"{diagnostic.line}:{diagnostic.column}: {diagnostic.severity}: {diagnostic.message}"
