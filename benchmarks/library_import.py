"""Importing a library of 10,000 small files: the dry run and the import itself.

Builds a zip of ``--files`` fragments (9,999 by default: with ``sysprompt.json`` that is
the 10,000 members an archive may hold) (default variants, provider variants and
provider-and-model variants of about 100 bytes each, with a ``sysprompt.json``), then,
in a child process on a fresh database (SQLite, or PostgreSQL with ``--database
postgres``), times ``library_import`` on it: a dry run into the empty library, the
import itself, and a dry run again (everything unchanged). Target: ≤ 5 s for 10,000
files.

``--checkout DIR`` runs the child on another source tree (the commit before, unpacked
with ``git archive main | tar -x -C DIR``) in the same run, so both are measured on one
machine at one time.

    .venv/bin/python benchmarks/library_import.py [--files N] [--database sqlite|postgres]
        [--checkout DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    ROOT,
    BenchmarkError,
    postgres_database,
    sqlite_database,
    terminate_on_sigterm,
)

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


def archive(files: int) -> bytes:
    """A zip of ``files`` small fragment files in the llxprt layout."""
    buffer = io.BytesIO()
    settings: dict[str, object] = {}
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for number in range(files):
            name = f"group{number // 1000}/fragment-{number:05}.md"
            kind = number % 3
            path = (
                name
                if kind == 0
                else f"providers/openai/{name}"
                if kind == 1
                else f"providers/gemini/models/gemini-2.5-flash/{name}"
            )
            out.writestr(path, f"Fragment {number}: keep it short, run the tests.\n" * 2)
            if number % 10 == 0:
                settings[path] = {"compress": True}
        out.writestr("sysprompt.json", json.dumps({"files": settings}))
    return buffer.getvalue()


CHILD = """
import sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from sysprompt.transfer.services import library_import, read_zip
data = open(sys.argv[1], "rb").read()
for label, dry_run in (("dry run, empty library", True), ("import", False),
                       ("dry run, all unchanged", True)):
    started = time.perf_counter()
    report = library_import(archive=read_zip(data), dry_run=dry_run, author=None)
    seconds = time.perf_counter() - started
    counts = {item.action for item in report.items}
    print(f"{label}: {seconds:.2f} s ({len(report.items):,} items, {sorted(counts)})")
"""


def run_child(checkout: Path, database_url: str, zip_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYSPROMPT_", "DJANGO_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        SECRET_KEY="benchmark-only",
        DEBUG="false",
        LOG_LEVEL="WARNING",
    )
    if checkout != ROOT:
        sources = [checkout, *(checkout / "packages" / p / "src" for p in ("core", "client"))]
        env["PYTHONPATH"] = os.pathsep.join(map(str, sources))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(zip_path)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise BenchmarkError(f"the import failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=9_999)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES)
    parser.add_argument("--checkout", type=Path, action="append", default=[])
    options = parser.parse_args()
    terminate_on_sigterm()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="import-bench-")))
        zip_path = work / "library.zip"
        zip_path.write_bytes(archive(options.files))
        size = zip_path.stat().st_size
        print(
            f"{options.files:,} files and sysprompt.json, {size:,} bytes zipped; {options.database}"
        )
        for checkout in [ROOT, *options.checkout]:
            database = (
                sqlite_database(work)
                if options.database == "sqlite"
                else postgres_database(options.postgres_url)
            )
            with database as fresh:
                output = run_child(checkout, fresh.url, zip_path)
            label = "this checkout" if checkout == ROOT else str(checkout)
            for line in output.splitlines():
                print(f"{label}: {line}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except BenchmarkError as error:
        raise SystemExit(f"library_import: {error}") from None
