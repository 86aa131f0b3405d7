"""Start-up: how long a ``manage.py`` command and the app's load take, this tree against
the tree before (issue 32, point 9).

Every ``manage.py`` command imported the anthropic and openai SDKs (through the
evaluations' services the URLconf imports) and the MCP SDK (``/mcp``'s view): seconds of
CPU on each command, on each ``scripts/serve`` start and on each reload of the dev
server, whose system checks import the URLconf. They are now imported where a model is
called and at ``/mcp``'s first request.

Measured, each a fresh interpreter, wall time and CPU time (user + system, the child's
own rusage), the median of ``--runs`` runs, the two trees interleaved run by run so a
busy machine slows both alike:

* ``manage.py --version``: Python and Django's command machinery, no settings work (the floor);
* ``manage.py help``: the settings, the apps, every command's name;
* ``manage.py check``: the system checks (the URLconf and every view it names);
* ``manage.py bootstrap``: what ``scripts/serve`` runs at every start (checks, migrate
  on a database already migrated, the groups, the library, the admin);
* app load: ``config.wsgi``'s application and its URLconf, what gunicorn and the dev
  server do before their first answer.

The tree before is ``--before DIR`` (a checkout), else ``--before-rev`` (default
``dac374d``, the last commit without the change) unpacked with ``git archive`` into a
temporary folder. Both run on this checkout's ``.venv``, each with its own
``packages/*/src`` first on ``PYTHONPATH`` and a SQLite database of its own; bytecode is
written (a warm-up run first), as in use. No ``.env`` is read (``SYSPROMPT_ENV_FILE=``).

    .venv/bin/python benchmarks/startup.py [--runs 5] [--before DIR | --before-rev REV]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE_REV = "dac374d"
"""The last commit before the provider and MCP SDKs were imported lazily."""

APP_LOAD = "from config.wsgi import application; from django.urls import resolve; resolve('/mcp')"


@dataclass(frozen=True)
class Measure:
    name: str
    args: tuple[str, ...]


MEASURES = (
    Measure("manage.py --version", ("manage.py", "--version")),
    Measure("manage.py help", ("manage.py", "help")),
    Measure("manage.py check", ("manage.py", "check")),
    Measure("manage.py bootstrap (serve's start)", ("manage.py", "bootstrap")),
    Measure("app load (config.wsgi + URLconf)", ("-c", APP_LOAD)),
)


@dataclass(frozen=True)
class Tree:
    label: str
    path: Path
    env: dict[str, str]


def tree(label: str, path: Path, folder: Path) -> Tree:
    """``path`` run on this venv with its own packages and database."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SYSPROMPT_", "DJANGO_"))
        and key not in {"DATABASE_URL", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "LOG_LEVEL"}
    }
    env |= {
        "SECRET_KEY": "startup-benchmark-not-a-secret",
        "DEBUG": "true",  # as scripts/serve runs
        "DATABASE_URL": f"sqlite:///{folder / f'{label}.sqlite3'}",
        "SYSPROMPT_ENV_FILE": "",
        "SYSPROMPT_ADMIN_PASSWORD": "startup-benchmark",
        "PYTHONPATH": f"{path / 'packages/core/src'}:{path / 'packages/client/src'}",
    }
    return Tree(label, path, env)


def run_once(where: Tree, measure: Measure) -> tuple[float, float]:
    """Wall and CPU seconds of one run (the child's own user + system time)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *measure.args],
        cwd=where.path,
        env=where.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"{where.label}: {' '.join(measure.args)} failed:\n{error}")
    return wall, usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def before_tree(path: str | None, rev: str) -> Iterator[Path]:
    if path:
        yield Path(path).resolve()
        return
    with tempfile.TemporaryDirectory(prefix="sysprompt-startup-before-") as folder:
        archive = subprocess.run(
            ["git", "archive", rev], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield Path(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", help="a checkout of the tree before")
    parser.add_argument("--before-rev", default=BEFORE_REV, help=f"default {BEFORE_REV}")
    options = parser.parse_args()

    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with (
        before_tree(options.before, options.before_rev) as before_path,
        tempfile.TemporaryDirectory(prefix="sysprompt-startup-") as folder,
    ):
        trees = [tree("before", before_path, Path(folder)), tree("after", ROOT, Path(folder))]
        for where in trees:  # warm-up: bytecode written, databases migrated
            for measure in MEASURES:
                run_once(where, measure)
        for _ in range(options.runs):
            for measure in MEASURES:
                for where in trees:
                    samples.setdefault((where.label, measure.name), []).append(
                        run_once(where, measure)
                    )
    print(f"before: {options.before or options.before_rev}; after: this tree ({ROOT})")
    print(f"median of {options.runs} runs; load average {os.getloadavg()[0]:.1f}\n")
    print("| measure | wall before | wall after | CPU before | CPU after | CPU after/before |")
    print("|---|---|---|---|---|---|")
    for measure in MEASURES:
        wall, cpu = _median(samples, trees, measure, 0), _median(samples, trees, measure, 1)
        print(
            f"| {measure.name} | {wall['before']:.2f} s | {wall['after']:.2f} s "
            f"| {cpu['before']:.2f} s | {cpu['after']:.2f} s "
            f"| {cpu['after'] / cpu['before']:.2f} |"
        )


def _median(
    samples: dict[tuple[str, str], list[tuple[float, float]]],
    trees: list[Tree],
    measure: Measure,
    index: int,
) -> dict[str, float]:
    """Each tree's median wall (``index`` 0) or CPU (1) time of ``measure``."""
    return {
        where.label: statistics.median(s[index] for s in samples[where.label, measure.name])
        for where in trees
    }


if __name__ == "__main__":
    main()
