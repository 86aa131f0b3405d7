"""bootstrap installs the library's shipped defaults, so a first start has them, and
running it again never touches an edit."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from sysprompt.library.defaults import shipped_records
from sysprompt.library.selectors import library_source, variant_current
from sysprompt.library.services import variant_save

pytestmark = pytest.mark.django_db


def bootstrap() -> str:
    out = io.StringIO()
    call_command("bootstrap", stdout=out)
    return out.getvalue()


def test_bootstrap_installs_the_shipped_defaults() -> None:
    output = bootstrap()

    count = len(shipped_records())
    assert f"Library defaults: {count} of {count} variants installed or upgraded" in output
    assert {"core", "env/git-repository", "tools/shell"} <= library_source().names()


def test_bootstrap_again_keeps_an_edit_and_says_so() -> None:
    bootstrap()
    variant_save(name="core", text="My core.", author=None)

    output = bootstrap()

    assert "Library defaults: 0 of" in output
    assert "1 kept with your edits (newer default available)" in output
    state = variant_current("core")
    assert state is not None and state.text == "My core." and state.newer_default
