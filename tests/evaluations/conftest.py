"""The evaluations' tests: one fake model process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evaluations.fake_model_process import FakeModel


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def fake(fake_model: FakeModel) -> FakeModel:
    """The module's fake model, its record and script cleared, no latency."""
    fake_model.reset()
    fake_model.control(latency_ms=0)
    return fake_model
