"""The garbage collected as each test module ends (imported by tests/conftest.py).

A socket or file left unclosed in a reference cycle warns when the collector finds it,
and warnings are errors here, so it fails whichever test is running then — often one
far from the code that left it. Collected as a module's tests end, it fails a test of
the module that left it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def collected_at_module_end() -> Iterator[None]:
    # Autouse and module-scoped: made before the module's other fixtures, so torn down
    # after them, and what they held is garbage by then.
    yield
    gc.collect()
    # What outlived the module is left out of every later collection (frozen), so each
    # walks only what the modules after it made: a full collection of the suite's heap
    # took about 0.3 s. The price: what outlives its module and only later becomes
    # cyclic garbage is never collected — rare, and a leak this check then misses.
    gc.freeze()
