"""Import a library file tree (a directory or a ``.zip`` file), or show what it would do."""

from __future__ import annotations

import os
import stat
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sysprompt.transfer.readers import MAX_TOTAL_BYTES, Archive
from sysprompt.transfer.services import ImportReport, library_import, read_directory, read_zip


class Command(BaseCommand):
    help = (
        "Import a library file tree (llxprt-style: <name>.md, providers/<p>/[models/<m>/]"
        "<name>.md, optional system-prompt.md and sysprompt.json) from a folder or a zip "
        "file. A new version is added only where the text or settings differ; nothing is "
        "deleted. All or nothing: if any file is refused, nothing is written and the exit "
        "status is 1. One line per file: action, its path in the archive, what it becomes "
        "and why."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", metavar="PATH", help="a folder or a .zip file")
        parser.add_argument(
            "--dry-run", action="store_true", help="report what would be done; write nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        archive = _read(options["path"])
        report = library_import(archive=archive, dry_run=options["dry_run"], author=None)
        for item in report.items:
            target = f" → {item.target.label}" if item.target is not None else ""
            self.stdout.write(f"{item.action:<9}  {item.path}{target}  {item.reason}")
        summary = _summary(report)
        if report.refused:
            raise CommandError(
                f"Refused: nothing was imported ({summary}). Fix or remove the refused "
                "files and import again."
            )
        if report.applied:
            self.stdout.write(f"Imported: {summary}.")
        else:
            self.stdout.write(f"Dry run, nothing was written: {summary}.")


def _read(path: str) -> Archive:
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            return read_directory(path)
        if not stat.S_ISREG(mode):
            raise CommandError(f"{path} is neither a folder nor a zip file.")
        with open(path, "rb") as file:
            data = file.read(MAX_TOTAL_BYTES + 1)
    except OSError as error:
        raise CommandError(f"{path} cannot be read ({error.strerror}).") from error
    if len(data) > MAX_TOTAL_BYTES:
        raise CommandError(f"{path} is over {MAX_TOTAL_BYTES:,} bytes: too large for a library.")
    return read_zip(data)


def _summary(report: ImportReport) -> str:
    verb = "would be " if not report.applied else ""
    counts = report.counts()
    parts = [
        f"{counts[action]} {verb if action in ('created', 'changed') else ''}{action}"
        for action in counts
        if counts[action]
    ]
    return ", ".join(parts) or "no files"
