"""bootstrap installs the library's shipped defaults, so a first start has them, and
running it again never touches an edit."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from sysprompt.library.defaults import shipped_records
from sysprompt.library.selectors import library_source, variant_current
from sysprompt.library.services import library_install, variant_save
from sysprompt_core.library import TreeRecord

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
    assert "1 kept with your edits (details:" in output  # nothing newer shipped
    state = variant_current("core")
    assert state is not None and state.text == "My core." and not state.newer_default


def test_bootstrap_says_when_a_newer_default_ships_under_an_edit() -> None:
    library_install(shipped=[TreeRecord("core", None, None, "An earlier release's core.\n")])
    variant_save(name="core", text="My core.", author=None)

    output = bootstrap()  # this release ships another core

    assert "1 kept with your edits (1 with a newer default available)" in output
    state = variant_current("core")
    assert state is not None and state.newer_default
