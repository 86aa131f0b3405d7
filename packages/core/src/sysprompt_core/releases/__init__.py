"""Releases and labels, as pure functions: no Django, no I/O.

* ``targets`` — label names (``production``, ``staging``; ``LABEL_NAME_PATTERN``) and
  what a label points at: ``"latest"``, one release, or a split of 2–10 weighted arms
  (:func:`parse_target`, which names the part of a bad target that is wrong);
* ``split``   — :func:`split_point` and :func:`choose_arm`: the arm of a split a
  conversation gets, from ``sha256(label ":" conversation_id)``, sticky with no state;
* :func:`unified_diff` — the project's one bounded line diff (``sysprompt_core.diff``)
  written as ``diff -u``, re-exported here for the releases;
* ``impact``  — :func:`impact_matrix`: host contexts rendered with what a label
  serves and with a candidate, compared (diff, sizes, tokens counted, shared
  prefixes, lint of the candidate), with a summary.

The server stores releases and labels and feeds these functions
(``sysprompt.releases``); nothing here knows where a release's versions are kept.
"""

from sysprompt_core.diff import DIFF_MAX_CHARS, BoundedDiff, Deadline, TooLarge, unified_diff
from sysprompt_core.errors import InvalidTarget
from sysprompt_core.releases.impact import (
    ContextImpact,
    Impact,
    ImpactContext,
    ImpactSummary,
    Side,
    impact_matrix,
)
from sysprompt_core.releases.split import choose_arm, split_point
from sysprompt_core.releases.targets import (
    LABEL_NAME_MAX_LENGTH,
    LABEL_NAME_PATTERN,
    LATEST,
    PRODUCTION,
    RELEASE_NUMBER_MAX,
    SPLIT_MAX_ARMS,
    SPLIT_MIN_ARMS,
    SPLIT_TOTAL,
    Arm,
    Pointer,
    Single,
    Split,
    Target,
    describe_pointer,
    is_label_name,
    label_name_check,
    parse_pointer,
    parse_target,
    percent,
)

__all__ = [
    "DIFF_MAX_CHARS",
    "LABEL_NAME_MAX_LENGTH",
    "LABEL_NAME_PATTERN",
    "LATEST",
    "PRODUCTION",
    "RELEASE_NUMBER_MAX",
    "SPLIT_MAX_ARMS",
    "SPLIT_MIN_ARMS",
    "SPLIT_TOTAL",
    "Arm",
    "BoundedDiff",
    "ContextImpact",
    "Deadline",
    "Impact",
    "ImpactContext",
    "ImpactSummary",
    "InvalidTarget",
    "Pointer",
    "Side",
    "Single",
    "Split",
    "Target",
    "TooLarge",
    "choose_arm",
    "describe_pointer",
    "impact_matrix",
    "is_label_name",
    "label_name_check",
    "parse_pointer",
    "parse_target",
    "percent",
    "split_point",
    "unified_diff",
]
