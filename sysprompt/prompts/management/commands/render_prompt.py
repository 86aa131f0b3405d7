"""Resolve a template for a working directory and print the system prompt."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from sysprompt.conf import app_settings, resolver_options
from sysprompt.prompts import selectors
from sysprompt_core.template import Diagnostic, compile, lint
from sysprompt_core.variables import ResolveContext, default_registry, resolve_prompt


class Command(BaseCommand):
    help = (
        "Print the system prompt a template resolves to for a conversation in --cwd: the "
        "saved current template (the built-in default when none is saved), --template FILE "
        "or --default-template. Lint diagnostics go to stderr; the prompt goes to stdout "
        "exactly as resolved (nothing at all when there is no prompt)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cwd", required=True, help="the conversation's working directory")
        parser.add_argument("--model", help="the model name ([prompt:model])")
        parser.add_argument("--conversation-id", help="the conversation id")
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
        source = _template_source(options["template"], default=options["default_template"])
        for diagnostic in lint(source, default_registry().vocabulary()):
            self.stderr.write(_format(diagnostic))
        context = ResolveContext(
            cwd=cwd,
            model=options["model"],
            conversation_id=options["conversation_id"],
            options=resolver_options(),
        )
        prompt = resolve_prompt(compile(source), context).prompt
        if prompt is not None:
            self.stdout.write(prompt, ending="")


def _directory(path: str) -> str:
    if not os.path.isdir(path):
        raise CommandError(f"--cwd {path!r} is not an existing directory.")
    return os.path.abspath(path)


def _template_source(path: str | None, *, default: bool) -> str:
    if default:
        return app_settings().default_template
    if path is None:
        return _saved_template()
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"Cannot read template {path!r}: {error}") from error


def _saved_template() -> str:
    """The current template, as new conversations get it; the default when none is saved."""
    try:
        return selectors.template_current().text
    except DatabaseError as error:
        raise CommandError(
            f"Cannot read the saved template from the database ({error}); run "
            "`manage.py migrate`, or pass --default-template or --template FILE."
        ) from error


def _format(diagnostic: Diagnostic) -> str:
    return f"{diagnostic.line}:{diagnostic.column}: {diagnostic.severity}: {diagnostic.message}"
