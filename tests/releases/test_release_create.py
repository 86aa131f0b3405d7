"""Releases §1: a release is a numbered snapshot of the working copy's version rows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sysprompt.errors import InvalidInput, ReleaseNotFound, TemplateVersionImmutable
from sysprompt.library import services as library
from sysprompt.releases import selectors, services
from sysprompt.releases.models import Release, ReleaseFragment
from tests.library.support import run_together
from tests.releases.support import save, template

pytestmark = pytest.mark.django_db


def test_release_create_references_every_live_variant_and_the_template(writer: User) -> None:
    template("[fragment:core]")
    save("core", "Core v1.")
    save("core", "Core v2.")
    save("core", "Claude.", "anthropic")
    save("persona", "You are [var:who].", defaults={"who": "kind"}, strategy="prepend")
    save("gone", "x")
    library.variant_delete(name="gone", provider=None, model=None, author=None)

    made = services.release_create(message="First release", author=writer)

    assert made.created
    detail = selectors.release_get(made.release.number)
    assert (detail.number, detail.message, detail.author) == (1, "First release", "writer")
    assert detail.template_version == 1
    assert [ref.as_dict() for ref in detail.fragments] == [
        {"name": "core", "provider": None, "model": None, "version": 2},
        {"name": "core", "provider": "anthropic", "model": None, "version": 1},
        {"name": "persona", "provider": None, "model": None, "version": 1},
    ]


def test_release_create_copies_no_text(writer: User) -> None:
    save("core", "A long text " * 100)

    made = services.release_create(author=writer)

    columns = {field.column for field in ReleaseFragment._meta.concrete_fields}
    assert columns == {"id", "release_id", "fragment_id", "version_id"}
    assert ReleaseFragment.objects.filter(release=made.release).count() == 1


def test_release_create_answers_the_existing_release_when_nothing_changed(
    writer: User, publisher: User
) -> None:
    save("core", "v1")
    first = services.release_create(message="one", author=writer)

    again = services.release_create(message="two", author=publisher)

    assert not again.created
    assert again.release.pk == first.release.pk
    assert Release.objects.count() == 1
    assert again.release.message == "one"


@pytest.mark.parametrize(
    "edit",
    [
        lambda: save("core", "v2"),
        lambda: save("core", "v1", compress=True),
        lambda: save("core", "openai", "openai"),
        lambda: library.variant_delete(name="core", provider=None, model=None, author=None),
        lambda: template("new root"),
    ],
    ids=["text", "setting", "new-variant", "delete", "template"],
)
def test_release_create_makes_a_new_release_after_any_edit(writer: User, edit: object) -> None:
    save("core", "v1")
    services.release_create(author=writer)

    edit()  # type: ignore[operator]
    made = services.release_create(author=writer)

    assert made.created
    assert made.release.number == 2


def test_release_create_of_the_default_template_holds_no_template_version(writer: User) -> None:
    made = services.release_create(author=writer)

    detail = selectors.release_get(made.release.number)
    assert (detail.template_version, detail.fragments) == (0, ())
    template_, _, release = selectors.pointer_build(made.release.number)
    assert template_.is_default and release == 1


def test_release_create_runs_a_fixed_number_of_queries_for_many_variants(writer: User) -> None:
    for n in range(60):
        save(f"f{n}", "x")
    with CaptureQueriesContext(connection) as few:
        services.release_create(author=writer)
    for n in range(60, 300):
        save(f"f{n}", "x")

    with CaptureQueriesContext(connection) as many:
        services.release_create(author=writer)

    assert len(many.captured_queries) == len(few.captured_queries)


def test_release_is_immutable(writer: User) -> None:
    release = services.release_create(author=writer).release

    release.message = "changed"
    with pytest.raises(TemplateVersionImmutable):
        release.save()
    with pytest.raises(TemplateVersionImmutable):
        release.delete()
    assert Release.objects.get().message == ""


def test_release_create_refuses_a_message_that_is_not_text(writer: User) -> None:
    with pytest.raises(InvalidInput) as caught:
        services.release_create(message=3, author=writer)

    assert caught.value.field == "message"
    assert not Release.objects.exists()


@pytest.mark.parametrize("number", [0, 2, 2**31, 10**20])
def test_release_get_raises_not_found_when_unknown(writer: User, number: int) -> None:
    services.release_create(author=writer)

    with pytest.raises(ReleaseNotFound):
        selectors.release_get(number)


@pytest.mark.django_db(transaction=True)
def test_release_create_concurrent_gives_one_release_per_working_copy() -> None:
    save("core", "v1")

    results = run_together(6, lambda _: services.release_create(author=None))

    assert all(not isinstance(result, BaseException) for result in results), results
    assert {result.release.number for result in results} == {1}
    assert Release.objects.count() == 1
    assert sum(result.created for result in results) == 1


@pytest.mark.django_db(transaction=True)
def test_release_create_concurrent_edits_number_releases_without_gaps() -> None:
    def edit_and_release(index: int) -> int:
        save(f"fragment-{index}", f"text {index}")
        return services.release_create(author=None).release.number

    results = run_together(5, edit_and_release)

    assert all(isinstance(result, int) for result in results), results
    numbers = sorted(Release.objects.values_list("number", flat=True))
    assert numbers == list(range(1, len(numbers) + 1))
