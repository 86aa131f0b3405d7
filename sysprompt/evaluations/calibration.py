"""Token ratios from evidence: what each provider reported as a call's input tokens
beside what the server counts for the same request (``manage.py token_ratios``,
docs/tokens.md).

For every evaluation call answered by its provider — not an error, not from the
response cache (a cached answer carries the first call's usage), not the ``echo``
model, not one of OpenAI's models (counted exactly: no ratio applies to them), and with
input tokens reported — the request's text is counted as the server
counts it (:func:`sysprompt_core.tokens.count`, uncalibrated): the system prompt and
each message's text, each counted on its own. Per provider (the endpoint's kind), the
reported total ÷ the counted total is the ratio ``TOKEN_RATIOS`` takes. It includes
what the provider adds to the text: its per-message and per-request tokens. Calls whose
case offers tools are left out (the tools' definitions are in the reported figure but
not in the text), and so are those whose endpoint the settings no longer name (its
provider is unknown). Nothing is changed: the operator sets the ratio.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sysprompt.conf import TOKEN_RATIO_RANGE, app_settings
from sysprompt.evaluations.models import RunCall
from sysprompt.model_endpoints import ECHO, ModelEndpoint
from sysprompt_core.tokens import count, encoding_for

__all__ = ["Calibration", "ProviderEvidence", "calibrate", "request_text"]

RATIO_DECIMALS = 2
"""A ratio is given to two decimals: finer would claim more than the evidence holds."""


@dataclass
class ProviderEvidence:
    """One provider's calls: how many, their counted and their reported input tokens."""

    provider: str
    calls: int = 0
    counted: int = 0
    reported: int = 0

    @property
    def ratio(self) -> float | None:
        """reported ÷ counted, to :data:`RATIO_DECIMALS` decimals (None: nothing counted)."""
        return round(self.reported / self.counted, RATIO_DECIMALS) if self.counted else None

    @property
    def usable(self) -> bool:
        """Whether the ratio belongs in ``TOKEN_RATIOS``: in its range."""
        low, high = TOKEN_RATIO_RANGE
        return self.ratio is not None and low <= self.ratio <= high


@dataclass
class Calibration:
    providers: dict[str, ProviderEvidence] = field(default_factory=dict)
    left_out: Counter[str] = field(default_factory=Counter)
    """Calls not used, by why: ``error``, ``cached``, ``echo``, ``exact`` (one of
    OpenAI's models), ``no usage``, ``tools``, ``endpoint gone``, ``uncountable`` (a
    text the server could not count)."""

    @property
    def setting(self) -> dict[str, float]:
        """The ``TOKEN_RATIOS`` the evidence supports."""
        return {
            name: evidence.ratio
            for name, evidence in sorted(self.providers.items())
            if evidence.usable and evidence.ratio is not None
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "providers": {
                name: {
                    "calls": e.calls,
                    "counted": e.counted,
                    "reported": e.reported,
                    "ratio": e.ratio,
                    "usable": e.usable,
                }
                for name, e in sorted(self.providers.items())
            },
            "left_out": dict(sorted(self.left_out.items())),
            "setting": self.setting,
        }


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", "")) for block in content if isinstance(block, Mapping)
        )
    return ""


def request_text(system: str | None, messages: list[Any]) -> list[str]:
    """The texts of a request that are counted: the system prompt (when there is one)
    and each message's text."""
    texts = [system] if system else []
    texts += [_content_text(m.get("content")) for m in messages if isinstance(m, Mapping)]
    return texts


def _left_out(call: RunCall, endpoint: ModelEndpoint | None) -> str | None:
    """Why ``call`` is no evidence, or None."""
    if call.error:
        return "error"
    if call.cached:
        return "cached"
    if endpoint is None:
        return "endpoint gone"
    if encoding_for(endpoint.kind, endpoint.model)[1]:
        return "exact"
    if endpoint.kind == ECHO:
        return "echo"
    if not call.input_tokens:
        return "no usage"
    if call.run_case.tools:
        return "tools"
    return None


def calibrate() -> Calibration:
    """The evidence of every recorded evaluation call (see the module docstring)."""
    endpoints = app_settings().models
    found = Calibration()
    calls = RunCall.objects.filter(done=True).select_related("run", "run_case").order_by("pk")
    for call in calls.iterator(chunk_size=500):
        side = "baseline" if call.side == "baseline" else "candidate"
        endpoint = endpoints.get(getattr(call.run, f"{side}_model"))
        why = _left_out(call, endpoint)
        if why is not None or endpoint is None or call.input_tokens is None:
            found.left_out[why or "no usage"] += 1
            continue
        case = call.run_case
        system = case.baseline_prompt if side == "baseline" else case.candidate_prompt
        provider, model = endpoint.kind, endpoint.model
        counted = [
            count(text, provider=provider, model=model).tokens
            for text in request_text(system, case.messages)
        ]
        if None in counted:
            found.left_out["uncountable"] += 1
            continue
        evidence = found.providers.setdefault(provider, ProviderEvidence(provider))
        evidence.calls += 1
        evidence.counted += sum(tokens for tokens in counted if tokens is not None)
        evidence.reported += call.input_tokens
    return found
