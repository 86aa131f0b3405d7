"""What the library's tests share: a one-line save, shipped records, counts, threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections

from sysprompt.library import services
from sysprompt.library.models import FragmentVersion, ShippedDefault
from sysprompt.library.selectors import VariantState
from sysprompt_core.library import TreeRecord


def save(
    name: str, text: str, provider: str | None = None, model: str | None = None, **fields: Any
) -> VariantState:
    fields.setdefault("author", None)
    return services.variant_save(name=name, provider=provider, model=model, text=text, **fields)


def record(
    name: str | None,
    text: str,
    provider: str | None = None,
    model: str | None = None,
    **settings: Any,
) -> TreeRecord:
    return TreeRecord(name, provider, model, text, **settings)


def snapshot() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every stored version and shipped default, to compare before and after."""
    versions = list(FragmentVersion.objects.order_by("pk").values_list())
    shipped = list(ShippedDefault.objects.order_by("pk").values_list())
    return versions, shipped


def run_together(count: int, call: Callable[[int], Any]) -> list[Any]:
    """Run ``call(i)`` in ``count`` threads released at once; each closes its connection.
    Results are the return values, or the exception each raised."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = call(index)
        except BaseException as error:  # the test inspects it
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results
