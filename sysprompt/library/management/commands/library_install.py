"""Install the shipped library defaults, or show what installing would do."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sysprompt.library.installer import ACTIONS, InstallStep
from sysprompt.library.services import library_install


class Command(BaseCommand):
    help = (
        "Install the library's shipped defaults, variant by variant: create what is "
        "missing, upgrade what still holds the installer's earlier text, keep (and flag "
        "'newer default available') what a person edited or imported, leave pinned "
        "variants alone. Safe to run again. One line per variant: action, fragment, "
        "variant, detail."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        steps = library_install(dry_run=options["dry_run"])
        for line in plan_lines(steps):
            self.stdout.write(line)
        done = "Dry run, nothing was written" if options["dry_run"] else "Installed"
        self.stdout.write(f"{done}: {summary(steps)}.")


def plan_lines(steps: Sequence[InstallStep]) -> list[str]:
    """One line per step: action, fragment name, variant, detail, in aligned columns."""
    name_width = max((len(step.name) for step in steps), default=0)
    variant_width = max((len(step.variant) for step in steps), default=0)
    return [
        f"{step.action:<9}  {step.name:<{name_width}}  {step.variant:<{variant_width}}  "
        f"{step.detail}"
        for step in steps
    ]


def summary(steps: Sequence[InstallStep]) -> str:
    """``2 create, 0 upgrade, …`` (every action, zeros included)."""
    counted = Counter(step.action for step in steps)
    return ", ".join(f"{counted[action]} {action}" for action in ACTIONS)
