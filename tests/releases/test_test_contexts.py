"""Releases §3: test contexts, fixtures of every impact report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import InvalidInput, TestContextNotFound
from sysprompt.releases import selectors, services
from sysprompt.releases.models import TestContext as Row
from sysprompt.releases.validation import TEST_CONTEXTS_MAX
from tests.releases.support import save

pytestmark = pytest.mark.django_db


def fields(cwd: Path, **more: Any) -> dict[str, Any]:
    return {"cwd": str(cwd), **more}


def test_test_context_save_creates_then_replaces(writer: User, workdir: Path) -> None:
    save("persona", "You are [var:who].")
    made = services.test_context_save(
        name="ci-openai",
        fields=fields(
            workdir,
            provider="openai",
            model="gpt-5",
            tools=["shell", "shell"],
            variables={"team": "infra"},
            values={"git:branch": "main"},
            override={"preset": "persona"},
        ),
        author=writer,
    )
    replaced = services.test_context_save(
        name="ci-openai", fields=fields(workdir / "."), author=writer
    )

    assert made.created and not replaced.created
    row = selectors.test_context_get("ci-openai")
    assert (row.cwd, row.provider, row.tools, row.override) == (str(workdir), "", [], None)
    assert made.context.tools == ["shell"]
    assert made.context.values == {"git:branch": "main"}


@pytest.mark.parametrize(
    ("name", "extra", "field"),
    [
        ("Bad Name", {}, "name"),
        ("ok", {"cwd": "relative/path"}, "cwd"),
        ("ok", {"cwd": None}, "cwd"),
        ("ok", {"tools": "shell"}, "tools"),
        ("ok", {"variables": {"bad]": "x"}}, "variables.bad]"),
        ("ok", {"values": {"var:x": "y"}}, "values.var:x"),
        ("ok", {"override": {"content": "x", "strategy": "replace"}}, "override.strategy"),
        ("ok", {"override": {"preset": "missing"}}, "override.preset"),
        ("ok", {"model": "m" * 201}, "model"),
        ("ok", {"provider": 3}, "provider"),
    ],
)
def test_test_context_save_refuses_bad_fields_naming_them(
    writer: User, workdir: Path, name: str, extra: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.test_context_save(name=name, fields={**fields(workdir), **extra}, author=writer)

    assert caught.value.field == field
    assert not Row.objects.exists()


def test_test_context_save_refuses_more_than_the_maximum(writer: User, workdir: Path) -> None:
    for n in range(TEST_CONTEXTS_MAX):
        services.test_context_save(name=f"t{n}", fields=fields(workdir), author=writer)

    with pytest.raises(InvalidInput) as caught:
        services.test_context_save(name="one-more", fields=fields(workdir), author=writer)

    assert caught.value.field == "name"
    assert Row.objects.count() == TEST_CONTEXTS_MAX


def test_test_context_delete_and_not_found(writer: User, workdir: Path) -> None:
    services.test_context_save(name="t", fields=fields(workdir), author=writer)

    assert services.test_context_delete(name="t", author=writer) is True
    assert services.test_context_delete(name="t", author=writer) is False
    with pytest.raises(TestContextNotFound):
        selectors.test_context_get("t")


def test_test_context_save_takes_values_without_a_cwd_and_refuses_neither(
    writer: User,
) -> None:
    saved = services.test_context_save(
        name="central", fields={"values": {"git:branch": "main"}}, author=writer
    )
    with pytest.raises(InvalidInput) as caught:
        services.test_context_save(name="empty", fields={"model": "m"}, author=writer)

    assert (saved.context.cwd, saved.context.values) == ("", {"git:branch": "main"})
    assert caught.value.field == "cwd" and "host-local values" in caught.value.message
    assert [row.name for row in Row.objects.all()] == ["central"]
