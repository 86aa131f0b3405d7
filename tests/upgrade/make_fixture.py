"""Make the upgrade test's fixture: a database filled by TODAY's code, what that code
answers, and every row it stored.

"Today's code" is what deployments run before named prompts: commit ``ddb9971``. Run
this script with that code (its checkout as the working directory, its virtualenv's
Python) and this repository's copy of the script::

    git worktree add --detach /tmp/upgrade-old ddb9971
    cd /tmp/upgrade-old && bash -c 'source scripts/_install && sysprompt_install dev'
    .venv/bin/python <repo>/tests/upgrade/make_fixture.py <repo>/tests/upgrade/fixture

It refuses to run on this repository's own code (the fixture must come from the old).
Pipeline, on a fresh SQLite file and the shared settings (``wire.ENVIRONMENT``: a
central deployment, so a stored ``cwd`` is a value and no folder of this machine is
read):

1. ``filling.fill`` — ``bootstrap`` (migrations, groups, the library's shipped defaults,
   ``production``, the admin), then everything through the old code's API, pages and
   commands, as its users would: users, agent hosts with tokens, template versions,
   fragments (variants, versions, deletions, an import, a pinned shipped default),
   releases, labels (moves, a rollback, a split, a gate, a protected one), test
   contexts, agent hosts' labels and instance overrides, conversations of both hosts
   (with and without tools, variables and overrides, a null prompt, one built before
   any template was saved, some whose owner was deleted), suites, cases, evaluation
   runs (done by the worker's own code with the ``echo`` model), webhooks with their
   events, deliveries and attempts (to a receiver in this process), logins, an admin
   change. Every table of every app then has rows (checked: a table of the old code
   nobody filled stops the script).
2. ``rows.json`` — every table's rows and sequences (``rows.py``), with the
   migrations' leaves.
3. ``answers.json`` — the requests today's clients make (``recording.exchanges``:
   every REST route's reads, a later turn of existing conversations, the Python
   client's ``system_prompt`` and its requests on the wire, ``/mcp``'s tools, the
   editor's pages; then writes), answered by this database, each at a recorded instant
   of a stopped clock (``wire.stopped_clock``).
4. A check of the fixture: ``replay.py load`` and ``answers`` under this same old code
   on a second fresh database must answer exactly what was recorded (but for the
   volatile fields of ``compare.DIFFERENCES``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import import_module
from pathlib import Path
from typing import Any

UPGRADE = Path(__file__).resolve().parent
REPO = UPGRADE.parents[1]
OLD = Path.cwd().resolve()

if __name__ == "__main__":
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != UPGRADE]
    sys.path.insert(0, str(OLD))
    sys.path.append(str(REPO))

from tests.upgrade import rows, wire  # noqa: E402
from tests.upgrade.compare import differences  # noqa: E402
from tests.upgrade.filling import fill  # noqa: E402
from tests.upgrade.recording import record  # noqa: E402


def main(argv: list[str]) -> None:
    out = Path(argv[0]).resolve()
    old_code_check()
    folder = Path(tempfile.mkdtemp(prefix="sysprompt-upgrade-fixture-"))
    env = wire.environment(os.environ, f"sqlite:///{folder / 'old.sqlite3'}")
    os.environ.clear()
    os.environ.update(env)
    import django

    django.setup()
    try:
        api = fill()
        out.mkdir(parents=True, exist_ok=True)
        dumped = dump()
        tables_filled_check(dumped)
        (out / "rows.json").write_text(lines(dumped))
        recorded = {"commit": commit(), **record(api)}
        (out / "answers.json").write_text(lines(recorded))
        fixture_check(out, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fixture written to {out}")


def lines(data: dict[str, Any]) -> str:
    """``data`` as JSON with each item of its lists and tables on a line of its own (a
    regenerated fixture's diff shows what changed, and the files stay small). Keys keep
    their order: a JSON field's text on SQLite is as it was stored."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def block(value: Any, indent: str) -> str:
        inner = indent + " "
        if isinstance(value, list) and value:
            return "[\n" + ",\n".join(inner + compact(item) for item in value) + f"\n{indent}]"
        if isinstance(value, dict) and value:
            items = [f"{inner}{compact(key)}: {block(item, inner)}" for key, item in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{indent}}}"
        return compact(value)

    return block(data, "") + "\n"


def old_code_check() -> None:
    """Stop unless the app imported is another checkout's (the old code's)."""
    here = Path(import_module("sysprompt").__file__ or "").resolve()
    if REPO in here.parents:
        raise SystemExit(
            f"sysprompt is imported from {here}: run this from the OLD code's checkout "
            "(see this script's docstring)."
        )


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=OLD, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# --- 2. The rows -------------------------------------------------------------------


def dump() -> dict[str, Any]:
    """Every table's rows, the sequences, the migrations' leaves and the commit."""
    from django.apps import apps
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    leaves = sorted(MigrationLoader(connection).graph.leaf_nodes())
    return {"commit": commit(), "leaves": leaves, **rows.rows_dump(apps, connection)}


def tables_filled_check(dumped: dict[str, Any]) -> None:
    """Stop when a table of the old code has no row: the fixture must hold them all."""
    empty = [table for table, content in dumped["tables"].items() if not content["rows"]]
    if empty:
        raise SystemExit(f"tables without rows: {', '.join(empty)}; fill them in fill()")


# --- 4. The fixture checked ----------------------------------------------------------


def fixture_check(out: Path, folder: Path) -> None:
    """``replay.py load`` then ``answers`` on a second database, under this old code: the
    answers must be the recorded ones (no migration ran, so nothing may differ but the
    volatile fields), and no stored row may be missing."""
    env = wire.environment(os.environ, f"sqlite:///{folder / 'check.sqlite3'}")
    script = str(UPGRADE / "replay.py")
    for step in (["load", str(out)], ["answers", str(out), str(folder / "check.json")]):
        subprocess.run([sys.executable, script, *step], cwd=OLD, env=env, check=True)
    checked = json.loads((folder / "check.json").read_text())
    recorded = json.loads((out / "answers.json").read_text())
    assert checked["rows"] == [], checked["rows"]
    found = differences(recorded["answers"], checked["answers"])
    if found:
        raise SystemExit("the fixture does not answer as recorded:\n" + "\n".join(found))


if __name__ == "__main__":
    main(sys.argv[1:])
