"""The upgrade test's comparison: the answers replayed after the upgrade against those
recorded before it, the stored rows against the fixture's, and THE table of the
differences allowed (:data:`DIFFERENCES`).

An answer is compared as JSON, field by field, down to every list item: each place that
differs (a value changed, a key gone, a key added, a list of another length) must be
matched by an entry of :data:`DIFFERENCES`, else it is reported. The stored rows'
changes (``rows.rows_kept``) are matched the same way, with ``where`` naming
``rows:<table>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

Kind = Literal["volatile", "added", "changed"]


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""A :class:`Difference` that allows any value."""


@dataclass(frozen=True)
class Difference:
    """A difference allowed between the recorded and the replayed answers.

    ``where``: the exchanges' names it applies to (a shell pattern); for stored rows
    ``rows:<table>``. ``path``: where in the answer, segments joined by ``/`` (each a
    shell pattern: ``*`` any one key or list index, ``**`` any number of segments), e.g.
    ``json/results/*/updated_at``; for rows, a column gone, ``+`` (rows added), ``-``
    (rows gone or changed) or ``table`` (the table gone). ``kind``:

    * ``volatile`` — present on both sides, its value may differ (a clock's, a random
      secret's);
    * ``added`` — absent from the recording, present now (a new field; rows added);
    * ``changed`` — anything, a change the upgrade makes on purpose; ``why`` says which.

    ``value``, when given, is the only value allowed there now (an added field's,
    ``"prompt": "default"``).
    """

    where: str
    path: str
    kind: Kind
    why: str
    value: Any = ANY


_KEPT = "3029283: construct and compact keep the frozen context for the fields left out"
_COUNTS = "92ac37c: token counts that fail say why (tokens_error, counted.error)"
_LIMITS = "c51fdee: evaluation runs planned, limited and costed"
_NAMED = "named prompts (issue 33): conversations name their prompt, ids scoped to the host"
_PROMPTS = "named prompts: answers name their prompt"

DIFFERENCES: tuple[Difference, ...] = (
    # --- Volatile: what differs on every run of the same code. ---
    Difference("create_webhook", "json/secret", "volatile", "a new random signing secret"),
    # --- Changed on purpose since ddb9971, by code rather than a migration. ---
    # 3029283: a construct or compact keeps the frozen context for every field it leaves
    # out, and says which (context_kept); a compaction naming neither model nor provider
    # keeps the frozen model (today's code stored "" beside the kept provider), so the
    # prompt, built with [prompt:model], and its sha256 change with it.
    Difference("construct *", "json/context_kept", "added", _KEPT),
    Difference("compact *", "json/context_kept", "added", _KEPT),
    *(
        Difference("compact gone-1 by an author", f"json/{field}", "changed", _KEPT)
        for field in ("model", "system_prompt", "persisted_system_prompt", "sha256")
    ),
    *(
        Difference(
            "list_conversations after the writes",
            f"json/results/2/{field}",
            "changed",
            _KEPT + " (the row of gone-1)",
        )
        for field in ("model", "sha256")
    ),
    # 92ac37c: a count that fails is shown unavailable with its reason (null: counted).
    Difference("preview_*", "json/**/tokens_error", "added", _COUNTS, value=None),
    Difference("release_impact*", "json/contexts/*/tokens_error", "added", _COUNTS, value=None),
    Difference(
        "get_evaluation_results *", "json/results/*/*/counted/error", "added", _COUNTS, value=None
    ),
    # 4ae14ad: a gate names the models of the runs it accepts (none: any).
    Difference("*label*", "**/gate/models", "added", "4ae14ad: gates name models", value=[]),
    # c51fdee: a run is planned and held to limits, and counts what it spends; a side's
    # tokens are null when the provider reported none (echo), where they were 0.
    *(
        Difference(where, f"json/{path}{field}", "added", _LIMITS)
        for where, path in (("list_evaluations", "results/*/"), ("get_evaluation *", ""))
        for field in ("cases_in_error", "default_model", "planned_calls", "planned_cost", "spent")
    ),
    Difference("get_evaluation_results *", "json/results/*/*/cost", "added", _LIMITS, value=None),
    *(
        Difference("get_evaluation_results *", f"json/results/*/*/{field}", "changed", _LIMITS)
        for field in ("input_tokens", "output_tokens")
    ),
    *(
        Difference("start_evaluation", f"json/{field}", "added", _LIMITS)
        for field in (
            "candidate_model",
            "baseline_model",
            "default_model",
            "planned_calls",
            "planned_cost",
        )
    ),
    # --- Added by the upgrade. ---
    # migrate's post_migrate adds the content type and permissions of every new model.
    Difference("rows:django_content_type", "+", "added", "the content types of new models"),
    Difference("rows:auth_permission", "+", "added", "the permissions of new models"),
    # Named prompts (issue 33): every answer about one prompt names it (today's data all
    # belongs to default), a row of the conversations list its agent host (ids are
    # scoped to the host), an audit record names the prompt of its change (null:
    # deployment-wide, as every record made before), a webhook filters on prompts (none:
    # every prompt's events), an import's item names the prompt a file sets (null: the
    # library's files), a fragment's variant lists the prompts that use it.
    Difference("*", "json/**/prompt", "added", _NAMED, value="default"),
    Difference("list_conversations*", "json/results/*/host", "added", _NAMED),
    Difference("client *", "result/prompt", "added", _NAMED, value="default"),
    Difference("list_audit*", "json/results/*/prompt", "added", _PROMPTS),
    Difference("*webhook*", "json/**/prompts", "added", _PROMPTS, value=[]),
    Difference("import_library*", "json/items/*/prompt", "added", _PROMPTS, value=None),
    Difference("get_fragment_variant*", "json/used_by", "added", "named prompts: used_by"),
    Difference(
        "get_fragment_variant*", "json/used_by_truncated", "added", "named prompts", value=False
    ),
    # --- Changed by the upgrade. ---
    # Ids are scoped to the agent host: host-b's first turn on a-1, host-a's id, is its
    # own conversation (201), where it was a 404.
    Difference("resolve of another host's conversation", "**", "changed", _NAMED),
)
"""Every difference the comparison accepts, with why. Keep it short and exact: an
entry here is a promise that today's clients do not mind."""


def _matches(pattern: str, path: Sequence[str]) -> bool:
    wanted = pattern.split("/")
    return _segments(wanted, list(path))


def _segments(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_segments(rest, path[index:]) for index in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], head) and _segments(rest, path[1:])


def allowed(
    name: str,
    path: Sequence[str],
    kind: Kind,
    table: Sequence[Difference] = DIFFERENCES,
    value: Any = ANY,
) -> bool:
    """Whether a difference of ``kind`` at ``path`` of exchange ``name``, ``value`` now,
    is in ``table`` (``changed`` entries allow every kind)."""
    return any(
        fnmatchcase(name, entry.where)
        and _matches(entry.path, path)
        and entry.kind in (kind, "changed")
        and (entry.value is ANY or entry.value == value)
        for entry in table
    )


_ABSENT = object()


def _walk(
    before: Any, after: Any, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Kind, Any, Any]]:
    """Each place where ``after`` differs from ``before``: its path, what kind of
    difference it could be, and both values."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            old, new = before.get(key, _ABSENT), after.get(key, _ABSENT)
            if old is _ABSENT:
                yield (*path, key), "added", _ABSENT, new
            elif new is _ABSENT:
                yield (*path, key), "changed", old, _ABSENT
            else:
                yield from _walk(old, new, (*path, key))
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _walk(old, new, (*path, str(index)))
        return
    if isinstance(before, str) and isinstance(after, str) and before != after:
        old, new = _json_text(before), _json_text(after)
        if old is not None and new is not None:
            yield from _walk(old, new, (*path, "(json)"))
            return
    if before != after or type(before) is not type(after):
        yield path, "volatile", before, after


def _json_text(text: str) -> Any:
    """A text holding a JSON object or list (an MCP tool's answer), as its value; else
    ``None``. Such texts compare as values: their objects' keys come in the order the
    database kept them (PostgreSQL's ``jsonb`` has an order of its own)."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "…"


def differences(
    recorded: Sequence[Mapping[str, Any]],
    replayed: Sequence[Mapping[str, Any]],
    table: Sequence[Difference] = DIFFERENCES,
) -> list[str]:
    """Every difference between the two lists of ``{"name", "answer"}`` that ``table``
    does not allow, one line each."""
    found: list[str] = []
    names = [item["name"] for item in recorded]
    if names != [item["name"] for item in replayed]:
        return ["the replay did not make the recorded requests, in their order"]
    for before, after in zip(recorded, replayed, strict=True):
        name = before["name"]
        for path, kind, old, new in _walk(before["answer"], after["answer"], ()):
            if not allowed(name, path, kind, table, new):
                where = "/".join(path) or "(the answer)"
                found.append(f"{name}: {where}: {_shown(old)} → {_shown(new)}")
    return found


def row_differences(
    changes: Sequence[Mapping[str, Any]], table: Sequence[Difference] = DIFFERENCES
) -> list[str]:
    """Every change of the stored rows (``rows.TableChange`` as a dict) that ``table``
    does not allow, one line each."""
    found: list[str] = []
    for change in changes:
        where = f"rows:{change['table']}"
        if change["table_gone"]:
            if not allowed(where, ["table"], "changed", table):
                found.append(f"{where}: the table is gone")
            continue
        for column in change["columns_gone"]:
            if not allowed(where, [column], "changed", table):
                found.append(f"{where}: the column {column} is gone")
        gone_allowed = allowed(where, ["-"], "changed", table)
        added_allowed = allowed(where, ["+"], "added", table)
        found.extend(_rows_said(where, change, gone_allowed, added_allowed))
    return found


def _rows_said(
    where: str, change: Mapping[str, Any], gone_allowed: bool, added_allowed: bool
) -> Iterator[str]:
    """One line per row gone, added or changed (a row gone and one added with the same
    first column, its key: the columns that differ)."""
    columns = change["columns"]
    added = {json.dumps(row[0]): row for row in change["added"]}
    for row in change["gone"]:
        new = added.pop(json.dumps(row[0]), None)
        if new is None:
            if not gone_allowed:
                yield f"{where}: a row is gone: {_shown(row)}"
            continue
        if gone_allowed:
            continue
        said = ", ".join(
            f"{column}: {_shown(old)} → {_shown(value)}"
            for column, old, value in zip(columns, row, new, strict=True)
            if old != value
        )
        yield f"{where}: the row {columns[0]}={_shown(row[0])} changed: {said}"
    if not added_allowed:
        for row in added.values():
            yield f"{where}: a row is new: {_shown(row)}"
