"""Export the prompt library and the root template to a directory or a ``.zip`` file."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sysprompt.transfer.services import ExportImpossible, export_plan, export_stream
from sysprompt.transfer.writers import ExportTargetError, write_directory, write_zip_file


class Command(BaseCommand):
    help = (
        "Export the library (every fragment's live variants) and the root template as a "
        "file tree: system-prompt.md, <name>.md, providers/<p>/[models/<m>/]<name>.md and "
        "sysprompt.json. PATH ending in .zip is written as a new zip file; any other PATH "
        "is a folder that must not exist or be empty. Nothing is ever overwritten."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path", metavar="PATH", help="a new .zip file, or a new or empty folder"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: str = options["path"]
        try:
            plan = export_plan()
            if path.lower().endswith(".zip"):
                write_zip_file(path, export_stream(plan))
            else:
                write_directory(path, plan.files())
        except (ExportImpossible, ExportTargetError) as error:
            raise CommandError(str(error)) from error
        fragments = plan.variants
        self.stdout.write(
            f"Exported the root template and {fragments} fragment variant"
            f"{'' if fragments == 1 else 's'} to {path}."
        )
