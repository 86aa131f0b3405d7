"""Releases §2: the arm of a split, from sha256(label ":" conversation_id)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sysprompt_core.releases import LATEST, Arm, Split, choose_arm, split_point

CANARY = Split((Arm(3, 9000), Arm(4, 1000)))


def test_split_point_is_the_documented_hash() -> None:
    digest = hashlib.sha256(b"production:conv-42").digest()

    assert split_point("production", "conv-42") == int.from_bytes(digest[:8], "big") % 10_000


@given(label=st.from_regex(r"[a-z0-9][a-z0-9._-]{0,62}", fullmatch=True), cid=st.text())
def test_choose_arm_is_sticky_when_asked_again(label: str, cid: str) -> None:
    first = choose_arm(CANARY, label, cid)

    assert all(choose_arm(CANARY, label, cid) == first for _ in range(3))
    assert 0 <= split_point(label, cid) < 10_000


def test_choose_arm_depends_on_the_label_too() -> None:
    ids = [f"c{n}" for n in range(2000)]

    production = [choose_arm(CANARY, "production", cid) for cid in ids]
    staging = [choose_arm(CANARY, "staging", cid) for cid in ids]

    assert production != staging


@pytest.mark.parametrize(
    "weights", [(9000, 1000), (5000, 5000), (100, 9900), (2500,) * 4, (1000,) * 10]
)
def test_choose_arm_takes_each_share_when_many_conversations_come(
    weights: tuple[int, ...],
) -> None:
    split = Split(tuple(Arm(n, weight) for n, weight in enumerate(weights, start=1)))
    count = 40_000

    chosen = Counter(choose_arm(split, "production", f"conversation-{n}") for n in range(count))

    for index, weight in enumerate(weights):
        expected = count * weight / 10_000
        spread = 4 * (expected * (1 - weight / 10_000)) ** 0.5  # four standard deviations
        assert abs(chosen[index] - expected) <= spread + 1, (index, chosen)


def test_choose_arm_only_moves_conversations_into_the_last_arm_when_it_grows() -> None:
    ids = [f"c{n}" for n in range(5000)]
    before = Split((Arm(3, 9000), Arm(LATEST, 1000)))
    after = Split((Arm(3, 8000), Arm(LATEST, 2000)))

    moves = Counter(
        (choose_arm(before, "production", cid), choose_arm(after, "production", cid)) for cid in ids
    )

    assert moves[(1, 0)] == 0  # nobody leaves the growing arm
    assert moves[(0, 1)] > 0


def test_choose_arm_points_at_the_arms_by_running_total() -> None:
    found: dict[int, str] = {}
    for n in range(100_000):
        cid = f"c{n}"
        found.setdefault(split_point("production", cid), cid)
        if {0, 8999, 9000, 9999} <= set(found):
            break

    assert choose_arm(CANARY, "production", found[0]) == 0
    assert choose_arm(CANARY, "production", found[8999]) == 0
    assert choose_arm(CANARY, "production", found[9000]) == 1
    assert choose_arm(CANARY, "production", found[9999]) == 1
