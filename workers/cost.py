"""What a model call costs in money, from a maintained price table (`genai-prices`).

Tokens say how much a run read and wrote; a finance lead asks what it cost. Each model turn's
usage is priced by `genai_prices.calc_price` (Pydantic's maintained table of provider prices,
shipped in the package: no network at run time, `update_prices` is never called), by the
model's id as its provider reports it. Muster's own offline and scripted models cost nothing.
A model the table does not know is *unpriced*: counted as such, never guessed as free.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

OWN_MODELS = frozenset({"muster-offline", "muster-scripted"})
"""Muster's own models (their `_llm_type`): free."""


@dataclass(frozen=True)
class CallCost:
    """One call's price: `usd` is None when the table does not know the model."""

    usd: float | None

    @property
    def priced(self) -> bool:
        return self.usd is not None


@lru_cache(maxsize=256)
def _per_token(model: str) -> tuple[float, float] | None:
    """USD per input and per output token for `model`, or None if the table lacks it."""
    from genai_prices import Usage, calc_price  # the table loads once, on the first priced call

    try:
        million = calc_price(Usage(input_tokens=1_000_000, output_tokens=0), model_ref=model)
        out = calc_price(Usage(input_tokens=0, output_tokens=1_000_000), model_ref=model)
    except (LookupError, ValueError):
        return None
    return float(million.total_price) / 1e6, float(out.total_price) / 1e6


def call_cost(model: str, input_tokens: int, output_tokens: int) -> CallCost:
    """The price of one call of `model` (its label: the provider's model id)."""
    if model in OWN_MODELS:
        return CallCost(0.0)
    rates = _per_token(model)
    if rates is None:
        return CallCost(None)
    return CallCost(round(input_tokens * rates[0] + output_tokens * rates[1], 8))
