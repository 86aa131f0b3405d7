"""What the Releases page's view tests share: a publisher beside the plain author,
production as installed, a working copy with a release, the htmx headers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from sysprompt.releases import selectors, services
from tests.editor.library_support import SCRIPT, save, web
from tests.releases.support import AUTHOR, PUBLISH, template, user

__all__ = ["SCRIPT", "move_count", "publisher", "publisher_web", "release", "save", "template"]


@pytest.fixture(autouse=True)
def production(db: None) -> None:
    """production → latest, as the migration leaves it (a transactional test elsewhere
    may have emptied the tables since)."""
    services.production_ensure()


@pytest.fixture
def publisher(db: None) -> User:
    """A prompt author who may move protected labels (production)."""
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture
def publisher_web(publisher: User) -> Client:
    return web(publisher)


def release(message: str = "") -> int:
    """A release of the working copy as it is; its number."""
    return services.release_create(message=message, author=None).release.number


def move_count(name: str = "production") -> int:
    return selectors.label_history(name).count()
