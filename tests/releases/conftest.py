"""Fixtures of the releases tests: an author, a publisher, the production label."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from sysprompt.releases import services
from tests.releases.support import AUTHOR, PUBLISH, user


@pytest.fixture
def writer(db: None) -> User:
    """A prompt author without the permission to publish."""
    return user("writer", AUTHOR)


@pytest.fixture
def publisher(db: None) -> User:
    """A prompt author who may move protected labels."""
    return user("publisher", AUTHOR, PUBLISH)


@pytest.fixture(autouse=True)
def production(db: None) -> None:
    """production → latest, as the migration leaves it (a transactional test elsewhere
    may have emptied the tables since)."""
    services.production_ensure()
