"""Credits from token usage through the per-model price table of the settings."""

from __future__ import annotations

from atrium.settings import Settings


def credits_micro(settings: Settings, *, model: str, input_tokens: int, output_tokens: int) -> int:
    """Micro-credits of a run. Prices are credits per million tokens, so a token costs
    `price` micro-credits: integers all the way, exact to sum."""
    price = settings.credit_prices.get(model, settings.credit_price_default)
    return round(input_tokens * price.input + output_tokens * price.output)
