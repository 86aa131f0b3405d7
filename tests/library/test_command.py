"""manage.py library_install [--dry-run]: the plan, one line per variant, and a summary."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from sysprompt.library.defaults import shipped_records
from sysprompt.library.models import FragmentVersion
from tests.library.support import save

pytestmark = pytest.mark.django_db


def install(*args: str) -> list[str]:
    out = io.StringIO()
    call_command("library_install", *args, stdout=out)
    return out.getvalue().splitlines()


def test_command_dry_run_prints_the_plan_and_writes_nothing() -> None:
    lines = install("--dry-run")

    count = len(shipped_records())
    assert len(lines) == count + 1
    assert lines[0].split() == [
        "create",
        "core",
        "default",
        "new:",
        "version",
        "1",
        "with",
        "the",
        "shipped",
        "text.",
    ]
    assert any(line.split()[:3] == ["create", "core", "openai/gpt-5"] for line in lines)
    assert lines[-1] == (
        f"Dry run, nothing was written: {count} create, 0 upgrade, 0 keep, 0 pinned, 0 unchanged."
    )
    assert not FragmentVersion.objects.exists()


def test_command_installs_then_reports_kept_edits() -> None:
    install()
    save("env/sandbox", "My sandbox rules.")

    lines = install()

    [sandbox] = [line for line in lines if " env/sandbox " in line]
    assert sandbox.startswith("keep ") and sandbox.endswith(
        "started from this default, nothing newer."
    )
    assert lines[-1].startswith("Installed: 0 create, 0 upgrade, 1 keep, 0 pinned, ")
