"""Shared setup for every test directory.

Tests run with DEBUG off, as Django's test runner forces; settings then have no
SECRET_KEY unless the environment gives one, so the test run supplies a throwaway key.
"""

from __future__ import annotations

import pytest
from django.conf import settings


def pytest_configure(config: pytest.Config) -> None:
    settings.SECRET_KEY = "tests-only-not-a-secret"
