"""Every cursor page of the API has one shape, defined once
(``serializers.PageOutputSerializer``): the page serializers of every serializer module
subclass it and add only their ``results``, and the schema's page components agree."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from sysprompt.api import library_serializers, release_serializers
from sysprompt.api import serializers as api_serializers
from sysprompt.api.serializers import PageOutputSerializer

PAGES = [
    "ConversationPage",
    "TemplateVersionPage",
    "LibraryPage",
    "FragmentVersionPage",
    "ReleasePage",
    "LabelPage",
    "LabelMovePage",
    "TestContextPage",
]


def page_serializers() -> list[type[serializers.Serializer[Any]]]:
    found = []
    for module in (api_serializers, library_serializers, release_serializers):
        for name, value in vars(module).items():
            if inspect.isclass(value) and name.endswith("PageOutputSerializer"):
                found.append(value)
    return [cls for cls in found if cls is not PageOutputSerializer]


def test_every_page_serializer_subclasses_the_one_page_shape() -> None:
    pages = page_serializers()
    shape = PageOutputSerializer._declared_fields
    assert len(pages) == len(PAGES)
    for page in pages:
        assert issubclass(page, PageOutputSerializer), page.__name__
        declared = page._declared_fields
        assert set(declared) - set(shape) == {"results"}, page.__name__
        # The links are the very fields of the one definition, not copies of it.
        assert all(declared[name] is shape[name] for name in shape), page.__name__


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    generator = SchemaGenerator()  # type: ignore[no-untyped-call]
    document = generator.get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    schemas: dict[str, Any] = json.loads(json.dumps(document))["components"]["schemas"]
    return schemas


def test_the_schemas_pages_share_next_and_previous(components: dict[str, Any]) -> None:
    links = [
        {key: components[page]["properties"][key] for key in ("next", "previous")} for page in PAGES
    ]
    assert all(link == links[0] for link in links)
    for page in PAGES:
        assert set(components[page]["properties"]) == {"next", "previous", "results"}
        assert components[page]["properties"]["results"]["type"] == "array"
