"""First run: migrate the database, create the groups, install the library's shipped
defaults, make sure ``production`` exists, make sure someone can log in."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sysprompt.accounts.services import AdminBootstrap, admin_ensure, groups_ensure
from sysprompt.conf import app_settings
from sysprompt.errors import AdminBootstrapError
from sysprompt.library.installer import InstallStep
from sysprompt.library.services import library_install
from sysprompt.releases.services import production_ensure


def manage_py() -> str:
    """How to run ``manage.py`` from the checkout, as this process was run."""
    venv_python = Path(settings.BASE_DIR) / ".venv" / "bin" / "python"
    python = ".venv/bin/python" if Path(sys.executable) == venv_python else "python"
    return f"{python} manage.py"


class Command(BaseCommand):
    help = (
        "Apply migrations, create the groups 'Prompt authors', 'Prompt publishers' and 'Agent "
        "hosts', install the library's shipped defaults (as manage.py library_install: never "
        "over an edit), make sure the label 'production' exists, then create the 'admin' "
        "superuser (a prompt publisher) if there is no superuser yet (password from "
        "SYSPROMPT_ADMIN_PASSWORD, else random) and print how to log in, how to get API "
        "tokens and which working directories are allowed. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default=f"http://127.0.0.1:{os.environ.get('PORT', '8000')}",
            help="where the server is reached (default: http://127.0.0.1:$PORT, PORT=8000)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        groups_ensure()
        steps = library_install()
        production_ensure()
        try:
            admin = admin_ensure(password=os.environ.get("SYSPROMPT_ADMIN_PASSWORD") or None)
        except AdminBootstrapError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(_library_line(steps))
        self.stdout.write(self._report(options["base_url"].rstrip("/"), admin))
        self.stdout.write(_roots_line())
        self.stdout.write(_webhooks_line())

    def _report(self, base_url: str, admin: AdminBootstrap) -> str:
        manage = manage_py()
        login = f"Log in at {base_url}/accounts/login/"
        if admin.password is None:
            login += (
                f" with your existing credentials (superuser {admin.username!r}; "
                f"forgot the password? run `{manage} changepassword {admin.username}`)."
            )
        else:
            login += f"\n  username: {admin.username}\n  password: {admin.password}"
        tokens = {
            f"for {admin.username}:": f"{manage} drf_create_token {admin.username}",
            "for an agent host:": f"{manage} create_agent_host my-host",
        }
        width = max(map(len, tokens))
        lines = [f"  {label:<{width}} {command}" for label, command in tokens.items()]
        return "\n".join([login, "API tokens (send as `Authorization: Token <key>`):", *lines])


def _roots_line() -> str:
    """Where conversations may work: the preview and the API refuse any other ``cwd``."""
    roots = app_settings().allowed_roots
    where = f"inside {', '.join(roots)}" if roots else "none (the list is set but empty)"
    return (
        f"Working directories allowed (SYSPROMPT_ALLOWED_ROOTS): {where}. A project "
        "elsewhere is refused by the preview and the API: set SYSPROMPT_ALLOWED_ROOTS "
        "(':'-separated absolute paths) and start again."
    )


def _webhooks_line() -> str:
    """Which receivers webhooks may reach: with DEBUG on, the loopback defaults say so."""
    conf = app_settings()
    line = "Webhook receivers allowed: public https addresses"
    if conf.webhook_allow_http_hosts:
        hosts = ", ".join(sorted(conf.webhook_allow_http_hosts))
        line += f"; plain http to {hosts} (SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS)"
    if conf.webhook_allow_private:
        hosts = ", ".join(sorted(conf.webhook_allow_private))
        line += f"; non-public addresses {hosts} (SYSPROMPT_WEBHOOK_ALLOW_PRIVATE)"
    raw = getattr(settings, "SYSPROMPT", {})
    if settings.DEBUG and not {"WEBHOOK_ALLOW_HTTP_HOSTS", "WEBHOOK_ALLOW_PRIVATE"} & set(raw):
        line += (
            ". DEBUG is on, so a receiver on this machine (http://127.0.0.1:…) works as it "
            "is; with DEBUG off, as in production, only public https receivers do"
        )
    return line + "."


def _library_line(steps: list[InstallStep]) -> str:
    written = sum(step.action in ("create", "upgrade") for step in steps)
    kept = sum(step.action == "keep" for step in steps)
    flagged = sum(step.newer_default for step in steps)
    line = f"Library defaults: {written} of {len(steps)} variants installed or upgraded"
    if kept:
        line += f"; {kept} kept with your edits"
    if flagged:
        line += f" ({flagged} with a newer default available)"
    return line + " (details: manage.py library_install --dry-run)."
