"""Token counts on the server: :func:`sysprompt_core.tokens.count` with the ratio the
``TOKEN_RATIOS`` setting calibrates the provider's estimate by (``docs/tokens.md``).

Every server figure is counted here, so an estimate is calibrated wherever it is shown
once the operator sets the provider's ratio (``manage.py token_ratios`` says which);
OpenAI's exact counts ignore it. The core's impact report takes the ratios as a mapping
(:func:`token_ratios`), read once for the whole report.
"""

from __future__ import annotations

from collections.abc import Mapping

from sysprompt.conf import app_settings
from sysprompt_core import tokens
from sysprompt_core.tokens import TokenCount, ratio_for

__all__ = ["count_tokens", "token_ratio", "token_ratios"]


def token_ratios() -> Mapping[str, float]:
    """The calibration ratios by provider (lowercase), as set."""
    return app_settings().token_ratios


def token_ratio(provider: str | None) -> float | None:
    """The calibration ratio set for ``provider`` (any case), or None."""
    return app_settings().token_ratio(provider)


def count_tokens(
    text: str,
    *,
    provider: str | None,
    model: str | None,
    ratios: Mapping[str, float] | None = None,
) -> TokenCount:
    """``text`` counted for ``provider`` and ``model``, an estimate calibrated by the
    provider's ratio (from ``ratios`` when given — read once for many counts — else
    from the settings)."""
    ratios = token_ratios() if ratios is None else ratios
    ratio = ratio_for(ratios, provider)
    return tokens.count(text, provider=provider, model=model, ratio=ratio)
