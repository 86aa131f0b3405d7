"""Create (or reuse) the user an agent host calls the API as, and print its API token."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sysprompt.accounts.services import AgentHost, agent_host_ensure
from sysprompt.errors import AgentHostError
from sysprompt.groups import AGENT_HOSTS_GROUP


class Command(BaseCommand):
    help = (
        f"Create a user for an agent host (group {AGENT_HOSTS_GROUP!r}: it may read the "
        "template and resolve prompts, not change the template), or reuse it, and print its "
        "API token on the last line. Safe to run again: the token stays unless --rotate."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the agent host's user name, e.g. my-host")
        parser.add_argument(
            "--rotate",
            action="store_true",
            help="replace the token: the old one stops working at once",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            host = agent_host_ensure(name=options["name"], rotate=options["rotate"])
        except AgentHostError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(self._report(host, rotated=options["rotate"]))

    def _report(self, host: AgentHost, *, rotated: bool) -> str:
        if host.user_created:
            what = (
                f"Created agent host {host.username!r}: it may read the template and resolve "
                "prompts, not change the template."
            )
        elif rotated:
            what = f"Agent host {host.username!r} has a new token; any earlier one no longer works."
        elif host.token_created:
            what = f"Agent host {host.username!r} exists and had no token; it has one now."
        else:
            what = (
                f"Agent host {host.username!r} exists; its token is unchanged "
                "(--rotate replaces it)."
            )
        return f"{what}\nAPI token (send as `Authorization: Token <key>`):\n{host.token}"
