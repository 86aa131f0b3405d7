"""Fixtures for the variable tests (no Django needed)."""

from __future__ import annotations

import pytest

from tests.core.variables.support import install_audit_hook


@pytest.fixture(scope="session")
def audit_hook_installed() -> None:
    """Install the (inert unless recording) audit hook once per session."""
    install_audit_hook()
