"""First run: migrate the database and make sure someone can log in."""

from __future__ import annotations

import os
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sysprompt.services import AdminBootstrap, AdminBootstrapError, admin_ensure


class Command(BaseCommand):
    help = (
        "Apply migrations, then create the 'admin' superuser if there is no superuser yet "
        "(password from SYSPROMPT_ADMIN_PASSWORD, else random) and print how to log in. "
        "Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default=f"http://127.0.0.1:{os.environ.get('PORT', '8000')}",
            help="where the server is reached (default: http://127.0.0.1:$PORT, PORT=8000)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        try:
            admin = admin_ensure(password=os.environ.get("SYSPROMPT_ADMIN_PASSWORD") or None)
        except AdminBootstrapError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(self._report(options["base_url"].rstrip("/"), admin))

    def _report(self, base_url: str, admin: AdminBootstrap) -> str:
        login = f"Log in at {base_url}/accounts/login/"
        if admin.password is None:
            return (
                f"{login} with your existing credentials "
                f"(superuser {admin.username!r}; forgot the password? "
                f"run `manage.py changepassword {admin.username}`)."
            )
        return f"{login}\n  username: {admin.username}\n  password: {admin.password}"
