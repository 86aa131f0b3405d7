"""``manage.py token_ratios``: the ratio of each provider's reported input tokens to the
server's count of the same evaluation requests, and the ``SYSPROMPT_TOKEN_RATIOS`` line
that calibrates its estimates (``sysprompt.evaluations.calibration``; docs/tokens.md).
It changes nothing; ``--json`` prints the figures as JSON."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from sysprompt.conf import TOKEN_RATIO_RANGE
from sysprompt.evaluations.calibration import Calibration, calibrate


class Command(BaseCommand):
    help = (
        "Work out each provider's token ratio (reported input tokens ÷ counted) from "
        "recorded evaluation calls; prints the SYSPROMPT_TOKEN_RATIOS to set."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        found = calibrate()
        if options["json"]:
            self.stdout.write(json.dumps(found.as_json(), indent=2))
            return
        self.stdout.write(report(found))


def report(found: Calibration) -> str:
    left_out = ", ".join(f"{n} {why}" for why, n in sorted(found.left_out.items()))
    left_line = f"Calls left out: {left_out}." if left_out else "No call was left out."
    if not found.providers:
        return (
            "No evidence: no evaluation call has input tokens reported by its provider "
            "(errors, cached answers, the echo model, OpenAI's models, counted exactly, and "
            "calls with tools do not count). "
            "Run an evaluation against the provider's model first; until a ratio is set, "
            "its estimates are the plain o200k_base count.\n" + left_line + "\n"
        )
    low, high = TOKEN_RATIO_RANGE
    rows = [("provider", "calls", "counted", "reported", "ratio", "")]
    for name, e in sorted(found.providers.items()):
        why = "" if e.usable else f"outside {low:g}–{high:g}: not used"
        ratio = f"{e.ratio:.2f}" if e.ratio is not None else "—"
        rows.append((name, str(e.calls), f"{e.counted:,}", f"{e.reported:,}", ratio, why))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(row[:5])
        )
        + (f"  {row[5]}" if row[5] else "")
        for row in rows
    ]
    lines.append(left_line)
    setting = found.setting
    if setting:
        lines.append("Set (this command changes nothing):")
        lines.append(f"SYSPROMPT_TOKEN_RATIOS='{json.dumps(setting)}'")
    else:
        lines.append("No provider here needs a ratio: nothing to set.")
    return "\n".join(lines) + "\n"
