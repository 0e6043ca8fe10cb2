"""Money from counted tokens: a price table the user gives (the project ships no price as fact).

The table is TOML (``-prices FILE``, else the file in ``MEMINI_PRICES``), one table per model name as the endpoint
is asked for it::

    [models."gpt-4o-mini"]
    input_per_million = 0.15     # dollars per 1,000,000 prompt tokens
    output_per_million = 0.60    # dollars per 1,000,000 completion tokens
    source = "where these prices were read, and when"   # optional, copied into the results

A call's cost is ``tokens_in / 1e6 * input_per_million + tokens_out / 1e6 * output_per_million`` at its model's
prices; an arm's cost is the sum over its calls (reader, every judge, relevance judge), per question that sum over
the arm's graded questions, and the total the sum over arms. With a table given, every model the run calls must
be in it (an error before any call, naming the model and the file); without one no money is reported.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError

ENV = "MEMINI_PRICES"
EXAMPLE = '[models."MODEL"]\ninput_per_million = 0.15\noutput_per_million = 0.60'

MAX_PRICES_BYTES = 16 << 20  # a price table is a few kB


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million prompt (input) and completion (output) tokens of one model."""

    model: str
    input_per_million: float
    output_per_million: float
    source: str = ""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return tokens_in / 1e6 * self.input_per_million + tokens_out / 1e6 * self.output_per_million


@dataclass(frozen=True)
class PriceTable:
    path: str
    models: Mapping[str, Price]

    def price(self, model: str) -> Price:
        return self.models[model]

    def require(self, models: Iterable[str]) -> None:
        missing = sorted(set(models) - set(self.models))
        if missing:
            raise BenchError(f"prices {self.path}: no [models.\"{missing[0]}\"] table (the run calls "
                             f"{', '.join(missing)}); add input_per_million and output_per_million for it")

    def to_json(self, models: Iterable[str]) -> dict:
        return {"file": self.path, "models": {m: {"input_per_million": self.models[m].input_per_million,
                                                  "output_per_million": self.models[m].output_per_million,
                                                  "source": self.models[m].source} for m in sorted(set(models))}}


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def read_prices(path: str) -> PriceTable:
    """The price table in ``path`` (format in the module docstring); any fault is one BenchError."""
    what = f"prices {path}"
    try:
        doc = tomllib.loads(read_regular(path, "-prices", limit=MAX_PRICES_BYTES).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BenchError(f"{what}: not TOML ({str(exc).splitlines()[0]}); write it as {EXAMPLE!r}") from None
    models = doc.get("models")
    if not isinstance(models, dict) or not models:
        raise BenchError(f"{what}: no [models.\"NAME\"] table; write it as {EXAMPLE!r}")
    out = {}
    for name, table in models.items():
        if not isinstance(table, dict) or not all(_number(table.get(k)) for k in ("input_per_million",
                                                                                 "output_per_million")):
            raise BenchError(f"{what}: [models.\"{name}\"] needs input_per_million and output_per_million as "
                             "non-negative numbers of dollars")
        source = table.get("source", "")
        out[name] = Price(name, float(table["input_per_million"]), float(table["output_per_million"]),
                          source if isinstance(source, str) else str(source))
    return PriceTable(path, out)


def prices_from(flag: str) -> PriceTable | None:
    """The table of ``-prices`` when given, else of ``MEMINI_PRICES`` when set, else None."""
    path = flag or os.environ.get(ENV, "").strip()
    return read_prices(path) if path else None


def money(table: PriceTable, calls: Iterable[tuple[str, int, int]]) -> float:
    """Dollars of ``(model, tokens_in, tokens_out)`` calls."""
    return sum(table.price(model).cost(tin, tout) for model, tin, tout in calls)
