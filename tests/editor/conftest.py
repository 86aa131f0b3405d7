"""Fixtures of the editor's view tests: logged-in clients (a module may define its own
of the same name, which then wins)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.editor.library_support import web


@pytest.fixture
def author_web(author: User) -> Client:
    """A prompt author (may change the template, so the library too)."""
    return web(author)


@pytest.fixture
def viewer_web(db: None) -> Client:
    """Logged in, without the author permission."""
    return web(User.objects.create_user("viewer"))
