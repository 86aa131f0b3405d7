"""Which arm of a split a conversation gets: sticky, stateless, the same everywhere.

The **split point** of a conversation under a label is a number from 0 to 9,999::

    digest = sha256((label + ":" + conversation_id).encode("utf-8"))
    point  = int.from_bytes(digest[:8], "big") % 10_000

and the arm is the first whose running total of weights exceeds it: with arms of
9,000 and 1,000 basis points, points 0–8,999 get arm 0 and 9,000–9,999 arm 1. The
same label and conversation give the same point on every construct and compaction,
on every app server, with nothing stored; the label is part of the hash, so the
conversations a canary takes under one label are not the same ones under another.

Ramping keeps conversations where they were: growing the *last* arm (9,000/1,000 →
8,000/2,000) moves only conversations into it, never out of it, and shrinking it moves
only conversations out of it. (Reordering arms reshuffles; the API keeps the order it
was given.)

The first 64 bits of the digest are uniform, so each point has the same chance up to
a bias of 10,000 / 2⁶⁴ (about 5 × 10⁻¹⁶): a weight of W basis points takes W / 10,000
of the conversations.
"""

from __future__ import annotations

import hashlib

from sysprompt_core.releases.targets import SPLIT_TOTAL, Split

__all__ = ["choose_arm", "split_point"]


def split_point(label: str, conversation_id: str) -> int:
    """The conversation's point (0 to 9,999) under ``label`` (see the module docstring)."""
    digest = hashlib.sha256(f"{label}:{conversation_id}".encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:8], "big") % SPLIT_TOTAL


def choose_arm(split: Split, label: str, conversation_id: str) -> int:
    """The index of the arm of ``split`` that ``conversation_id`` gets under ``label``."""
    point = split_point(label, conversation_id)
    total = 0
    for index, arm in enumerate(split.arms):
        total += arm.weight
        if point < total:
            return index
    raise ValueError(f"the weights of {split} add up to {total}, not {SPLIT_TOTAL}")
