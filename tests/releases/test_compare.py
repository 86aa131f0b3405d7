"""Releases §1: what differs between two releases, or a release and the working copy."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.errors import ReleaseNotFound
from sysprompt.library import services as library
from sysprompt.releases import selectors, services
from sysprompt_core.releases import LATEST
from tests.releases.support import save, template

pytestmark = pytest.mark.django_db


def release(author: User) -> int:
    return services.release_create(author=author).release.number


def test_release_compare_with_latest_lists_template_and_variants_with_diffs(
    writer: User,
) -> None:
    template("Root v1.\n[fragment:core]\n")
    save("core", "Core line 1\nCore line 2\n")
    save("kept", "same")
    save("dropped", "bye")
    first = release(writer)
    template("Root v2.\n[fragment:core]\n")
    save("core", "Core line 1\nCore line two\n")
    save("core", "Claude", "anthropic")
    library.variant_delete(name="dropped", provider=None, model=None, author=None)

    comparison = selectors.release_compare(first, LATEST)

    assert comparison.changed
    assert comparison.template is not None
    assert (comparison.template.before_version, comparison.template.after_version) == (1, 2)
    assert comparison.template.diff.text == (
        "--- before\n+++ after\n@@ -1,2 +1,2 @@\n-Root v1.\n+Root v2.\n [fragment:core]\n"
    )
    changes = {(c.name, c.provider): c for c in comparison.fragments}
    assert set(changes) == {("core", None), ("core", "anthropic"), ("dropped", None)}
    assert (changes["core", None].before_version, changes["core", None].after_version) == (1, 2)
    assert "-Core line 2\n+Core line two\n" in changes["core", None].diff.text
    assert changes["core", "anthropic"].before_version is None
    assert changes["core", "anthropic"].diff.text.endswith(
        "+Claude\n\\ No newline at end of file\n"
    )
    assert changes["dropped", None].after_version is None


def test_release_compare_two_releases_both_ways(writer: User) -> None:
    save("core", "one")
    first = release(writer)
    save("core", "two")
    second = release(writer)

    forward = selectors.release_compare(first, second)
    backward = selectors.release_compare(second, first)

    assert forward.template is None
    assert [(c.before_version, c.after_version) for c in forward.fragments] == [(1, 2)]
    assert [(c.before_version, c.after_version) for c in backward.fragments] == [(2, 1)]
    assert "-one" in forward.fragments[0].diff.text and "+one" in backward.fragments[0].diff.text


def test_release_compare_sees_a_settings_change_with_the_same_text(writer: User) -> None:
    save("core", "same text")
    first = release(writer)
    save("core", "same text", compress=True)

    [change] = selectors.release_compare(first, LATEST).fragments

    assert change.settings_changed
    assert change.diff.text == ""


def test_release_compare_unchanged_working_copy_differs_in_nothing(writer: User) -> None:
    save("core", "x")
    first = release(writer)

    comparison = selectors.release_compare(first, LATEST)

    assert not comparison.changed


def test_release_compare_against_the_default_template(writer: User, settings: object) -> None:
    first = release(writer)
    template("Saved.")

    comparison = selectors.release_compare(first, LATEST)

    assert comparison.template is not None
    assert comparison.template.before_version == 0
    assert "-You are a helpful coding assistant.\n" in comparison.template.diff.text


@pytest.mark.parametrize("other", [2, 99])
def test_release_compare_unknown_release_raises_not_found(writer: User, other: int) -> None:
    release(writer)

    with pytest.raises(ReleaseNotFound):
        selectors.release_compare(other if other == 99 else 5, 1 if other == 99 else LATEST)


def test_working_copy_changes_follow_each_arm_of_production(writer: User, publisher: User) -> None:
    save("core", "one")
    first = release(writer)
    save("core", "two")
    services.label_set(
        name="production",
        target={
            "split": [{"release": first, "weight": 9000}, {"release": "latest", "weight": 1000}]
        },
        author=publisher,
    )

    arms = selectors.working_copy_changes("production")

    assert [(arm.pointer, arm.weight, arm.comparison.changed) for arm in arms] == [
        (first, 9000, True),
        (LATEST, 1000, False),
    ]
