"""The tables: versions are append-only; the constraints hold without the services."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from sysprompt.errors import TemplateVersionImmutable
from sysprompt.library.models import Fragment, FragmentVersion
from tests.library.support import save

pytestmark = pytest.mark.django_db


def version(**fields: object) -> FragmentVersion:
    fragment, _ = Fragment.objects.get_or_create(
        name="core", defaults={"created_at": timezone.now()}
    )
    values: dict[str, object] = {
        "fragment": fragment,
        "number": 1,
        "text": "x",
        "source": "user",
        "created_at": timezone.now(),
    }
    return FragmentVersion(**(values | fields))


def test_version_save_raises_when_the_row_is_stored() -> None:
    save("core", "first")
    stored = FragmentVersion.objects.get()
    stored.text = "changed"

    with pytest.raises(TemplateVersionImmutable):
        stored.save()

    assert FragmentVersion.objects.get().text == "first"


def test_version_delete_raises_and_keeps_the_row() -> None:
    save("core", "first")

    with pytest.raises(TemplateVersionImmutable):
        FragmentVersion.objects.get().delete()

    assert FragmentVersion.objects.count() == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"model": "gpt-5"},  # a model variant without a provider
        {"strategy": "replace"},
        {"source": "someone"},
        {"number": 0},
    ],
    ids=["model-without-provider", "strategy-replace", "unknown-source", "number-zero"],
)
def test_version_constraint_refuses_the_row(fields: dict[str, object]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        version(**fields).save()


def test_version_number_is_unique_per_variant() -> None:
    version(provider="openai").save()
    version(provider="anthropic").save()

    with pytest.raises(IntegrityError), transaction.atomic():
        version(provider="openai").save()
