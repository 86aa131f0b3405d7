"""Prompts benchmark: ``GET /api/prompts`` and the Prompts page with 10,000 prompts,
against the same with one prompt, in the same run.

For each database (SQLite, and PostgreSQL unless ``--database sqlite``) a fresh
database is migrated; in one process (Django's whole request path, no network):

* with only ``default``: the API's first page and the Prompts page;
* then 9,999 more prompts (20 folders of 7 subfolders, each prompt with a template
  version, a third with a ``staging`` label): the API's **first and last page of 100**
  (targets: each ≤ 100 ms, the last as fast as the first — keyset pages), a folder's
  first page, and the Prompts page's first and last 100 rows with the folder tree
  (target ≤ 300 ms).

Targets are printed, never asserted. Run:
``.venv/bin/python benchmarks/prompts_list.py [--quick] [--database sqlite|postgres|both]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._support import (  # noqa: E402
    PYTHON,
    ROOT,
    database_arguments,
    measured_per_database,
    terminate_on_sigterm,
)

API_TARGET_MS = 100.0
PAGE_TARGET_MS = 300.0
FIGURES = (
    ("api_one", "GET /api/prompts, 1 prompt"),
    ("api_first", "GET /api/prompts, 10,000: first page"),
    ("api_last", "GET /api/prompts, 10,000: last page"),
    ("api_folder", "GET /api/prompts?folder=, 10,000"),
    ("page_one", "Prompts page, 1 prompt"),
    ("page_first", "Prompts page, 10,000: first rows"),
    ("page_last", "Prompts page, 10,000: last rows"),
)


def main() -> None:
    terminate_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    database_arguments(parser)
    args = parser.parse_args()
    samples = args.samples or (10 if args.quick else 40)
    print(f"samples: {samples} per figure (medians)")
    with tempfile.TemporaryDirectory(prefix="bench-prompts-") as scratch:
        roots = Path(scratch) / "roots"
        roots.mkdir()
        script = ROOT / "benchmarks" / "_prompts_list_inprocess.py"
        argv = [PYTHON, str(script), "--samples", str(samples)]
        for kind, data in measured_per_database(args, argv, work=Path(scratch), roots=roots):
            report(kind, data)


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1e3


def report(kind: str, data: dict[str, object]) -> None:
    print(f"\n== {kind}: {data['pages']} pages of 100 walked")
    median = {}
    for key, words in FIGURES:
        values = data[key]
        assert isinstance(values, list)
        median[key] = _median_ms(values)
        print(f"  {words:<40} median {median[key]:8.2f} ms")
    for key in ("api_first", "api_last", "api_folder"):
        met = median[key] <= API_TARGET_MS
        print(f"  {key}: target <= {API_TARGET_MS:.0f} ms: {'PASS' if met else 'MISS'}")
    ratio = median["api_last"] / median["api_first"]
    print(
        f"  last page / first page: {ratio:.2f}x (target: as fast, about 1x; measured one "
        "after the other, so a busy machine moves it)"
    )
    for key in ("page_first", "page_last"):
        met = median[key] <= PAGE_TARGET_MS
        print(f"  {key}: target <= {PAGE_TARGET_MS:.0f} ms: {'PASS' if met else 'MISS'}")


if __name__ == "__main__":
    main()
