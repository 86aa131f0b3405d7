"""Evaluations §3: the response cache's key covers exactly what decides an answer."""

from __future__ import annotations

import hashlib
import json

import pytest

from sysprompt_core.evaluations import response_key

BASE: dict[str, object] = {
    "endpoint": "fake",
    "model": "m-1",
    "params": {"temperature": 0, "max_tokens": 100},
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    "tools": [],
    "repetition": 0,
}


def key(**changes: object) -> str:
    return response_key(**{**BASE, **changes})  # type: ignore[arg-type]


def test_response_key_is_sha256_of_canonical_json() -> None:
    payload = json.dumps(
        ["fake", "m-1", BASE["params"], BASE["messages"], [], 0],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )

    assert key() == hashlib.sha256(payload.encode()).hexdigest()


def test_response_key_ignores_key_order() -> None:
    assert key(params={"max_tokens": 100, "temperature": 0}) == key()


@pytest.mark.parametrize(
    "change",
    [
        {"endpoint": "other"},
        {"model": "m-2"},
        {"params": {"temperature": 0.5, "max_tokens": 100}},
        {
            "messages": [
                {"role": "system", "content": "Be brief!"},
                {"role": "user", "content": "Hi"},
            ]
        },
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"repetition": 1},
        {"output_schema": {"type": "object"}},
    ],
    ids=lambda change: next(iter(change)),
)
def test_response_key_changes_with_each_input(change: dict[str, object]) -> None:
    assert key(**change) != key()
