"""A label's gate: moves it refuses until evaluation runs say the release is good.

A gate is ``{"suite", "max_regressions", "min_pass_rate", "models"}`` stored on the
label (:class:`Gate`, checked by :func:`gate_valid`). ``models`` names the model
endpoints its runs must use: a run counts only when one of them answered both its
sides, and each one named needs its own passing run. Left out when the gate is set,
it is the default model (``EVAL_DEFAULT_MODEL``), stored as named — unless that is an
``echo`` endpoint (the built-in one, or any of that kind), which answers every case
without a model and counts only when a gate names it. A gate stored before gates had
models reads them the same way at each check (:meth:`Gate.required_models`).

Every move of a label goes through ``services._label_write`` (``label_set``,
``label_rollback``, ``release_publish``), which asks :func:`move_reasons` what is
missing before it writes.

The evidence — finished runs of the suite — lives in ``sysprompt.evaluations``, an app
*above* this one in the layers (it renders releases), so this module cannot import it.
The dependency is inverted: this module defines what it needs (:class:`GateEvidence`,
two methods) and the evaluations app registers its implementation in its
``AppConfig.ready()`` (:func:`evidence_register`). Without one, every gated move is
refused (fail closed), and no gate can be set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sysprompt.conf import app_settings
from sysprompt.errors import InvalidInput
from sysprompt.model_endpoints import ECHO
from sysprompt.releases.validation import label_name_valid
from sysprompt_core.releases import LATEST, Target

if TYPE_CHECKING:
    from sysprompt.prompts.models import Prompt

__all__ = [
    "GATE_MODELS_MAX",
    "Gate",
    "GateEvidence",
    "default_models",
    "evidence_register",
    "gate_models_valid",
    "gate_valid",
    "move_reasons",
]

MAX_REGRESSIONS_LIMIT = 1_000_000
GATE_MODELS_MAX = 10
"""The most models one gate names (each one needs its own passing run)."""
GATE_FIELDS = ("suite", "max_regressions", "min_pass_rate", "models")


@dataclass(frozen=True)
class Gate:
    """What a move of a gated label needs: for each of ``models``, a finished run of
    ``suite`` on that model (both sides) with at most ``max_regressions`` regressions
    and a candidate pass rate of at least ``min_pass_rate`` (0 to 1). ``models`` empty:
    a gate stored before gates named models (:meth:`required_models`)."""

    suite: str
    max_regressions: int = 0
    min_pass_rate: float = 0.0
    models: tuple[str, ...] = ()

    def required_models(self) -> tuple[str, ...]:
        """The models whose runs count: those the gate names; for a gate that names
        none, the default model, unless that is an echo (then none: no run counts)."""
        return self.models or default_models()

    def as_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "max_regressions": self.max_regressions,
            "min_pass_rate": self.min_pass_rate,
            "models": list(self.required_models()),
        }

    def stored_json(self) -> dict[str, Any]:
        """What the label keeps (``models`` as named; the API shows :meth:`as_json`)."""
        return {
            "suite": self.suite,
            "max_regressions": self.max_regressions,
            "min_pass_rate": self.min_pass_rate,
            "models": list(self.models),
        }

    @classmethod
    def from_json(cls, value: Any) -> Gate | None:
        """The stored gate (``None``: the label has none); stored values were checked."""
        if not isinstance(value, dict):
            return None
        return cls(
            suite=str(value["suite"]),
            max_regressions=int(value.get("max_regressions", 0)),
            min_pass_rate=float(value.get("min_pass_rate", 0.0)),
            models=tuple(str(model) for model in value.get("models") or ()),
        )


class GateEvidence(Protocol):
    """What the gate asks of the app that keeps evaluation runs."""

    def suite_exists(self, name: str, *, prompt: Prompt | None = None) -> bool:
        """Whether ``prompt`` (``default`` when None) has a suite ``name``."""

    def release_reasons(
        self,
        *,
        gate: Gate,
        label: str,
        baseline: Target,
        release: int,
        prompt: Prompt | None = None,
    ) -> list[str]:
        """Why release ``release`` of ``prompt`` may not replace ``baseline`` (what
        ``label`` serves now) under ``gate``: one sentence per thing missing; empty when,
        for each of ``gate.required_models()``, a run of that prompt on that model
        passed (runs of other prompts never count)."""


_evidence: list[GateEvidence] = []


def evidence_register(evidence: GateEvidence) -> None:
    """Install the evidence the gate asks (the evaluations app, at ``ready()``)."""
    _evidence[:] = [evidence]


def _installed() -> GateEvidence | None:
    return _evidence[0] if _evidence else None


def gate_valid(value: object, field: str = "gate", *, prompt: Prompt | None = None) -> Gate | None:
    """A gate from the API (``None``: no gate), checked; the suite must exist in
    ``prompt`` (the label's; ``default`` when None), and the models be configured ones
    (left out: the default model, unless it is ``echo``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(
            field, 'a gate is {"suite", "max_regressions", "min_pass_rate", "models"} or null.'
        )
    unknown = sorted(set(value) - set(GATE_FIELDS))
    if unknown:
        raise InvalidInput(field, f"unknown field {unknown[0]!r} in the gate.")
    suite = label_name_valid(value.get("suite"), f"{field}.suite")
    regressions = value.get("max_regressions", 0)
    if (
        isinstance(regressions, bool)
        or not isinstance(regressions, int)
        or not 0 <= regressions <= MAX_REGRESSIONS_LIMIT
    ):
        raise InvalidInput(
            f"{field}.max_regressions", f"a whole number from 0 to {MAX_REGRESSIONS_LIMIT:,}."
        )
    rate = value.get("min_pass_rate", 0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise InvalidInput(f"{field}.min_pass_rate", "a number from 0 to 1 (0.9: 90 %).")
    evidence = _installed()
    if evidence is None or not evidence.suite_exists(suite, prompt=prompt):
        raise InvalidInput(f"{field}.suite", f"There is no suite {suite!r}.")
    models = gate_models_valid(value.get("models"), f"{field}.models")
    return Gate(suite=suite, max_regressions=regressions, min_pass_rate=float(rate), models=models)


def default_models() -> tuple[str, ...]:
    """The models of a gate that names none: the default model (``EVAL_DEFAULT_MODEL``),
    unless it is an ``echo`` endpoint (then none): a gate counts echo's runs only when
    it names it."""
    conf = app_settings()
    endpoint = conf.models.get(conf.eval_default_model)
    return () if endpoint is None or endpoint.kind == ECHO else (endpoint.name,)


def gate_models_valid(value: object, field: str = "gate.models") -> tuple[str, ...]:
    """The models a gate names: 1 to :data:`GATE_MODELS_MAX` configured model names,
    each once; ``None`` (left out): the default model — refused when that is an
    ``echo`` endpoint, which a gate counts only when it names it."""
    configured = app_settings().models
    if value is None:
        default = default_models()
        if not default:
            raise InvalidInput(
                field,
                "name the models the gate's runs must use: the default model is an echo, "
                "which answers without a model and counts for a gate only when the gate "
                f"names it (the models: {', '.join(configured)}).",
            )
        return default
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= GATE_MODELS_MAX
        or not all(isinstance(name, str) for name in value)
    ):
        raise InvalidInput(field, f"a list of 1 to {GATE_MODELS_MAX} model names.")
    unknown = [name for name in value if name not in configured]
    if unknown:
        raise InvalidInput(
            field,
            f"there is no model {unknown[0]!r}; the models: {', '.join(configured)} "
            "(GET /api/models lists them).",
        )
    if len(set(value)) != len(value):
        raise InvalidInput(field, "name each model once.")
    return tuple(value)


def move_reasons(
    *, gate: Gate, label: str, current: Target, new: Target, prompt: Prompt | None = None
) -> list[str]:
    """Why ``label`` of ``prompt`` (``default`` when None; gated by ``gate``, serving
    ``current``) may not move to ``new``; only that prompt's runs count;
    empty when it may. ``latest`` is always refused (every save would pass the gate);
    each release of ``new`` that ``current`` does not serve already needs, for each of
    the gate's models, a passing run with ``current`` as baseline (a split's arms one by
    one)."""
    if LATEST in new.pointers:
        return [
            f"a gated label cannot follow latest (every save would reach it unevaluated): "
            f"point {label} at a release, or remove its gate first"
        ]
    evidence = _installed()
    reasons: list[str] = []
    for pointer in new.pointers:
        if pointer in current.pointers or not isinstance(pointer, int):
            continue
        if not gate.required_models():
            return [
                "the gate names no model, and the default model is an echo, which answers "
                "without a model: no run counts until the gate names its models"
            ]
        if evidence is None:
            reasons.append("no evaluations app is installed to provide the gate's runs")
            break
        reasons += evidence.release_reasons(
            gate=gate, label=label, baseline=current, release=pointer, prompt=prompt
        )
    return reasons
