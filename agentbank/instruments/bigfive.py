"""Big Five instruments: IPIP-50 (public domain, shipped) and BFI-44 (read from the reference data).

BFI-44 is free for non-commercial research only, so the bank does not ship its items; it reads
them from ``AGENTBANK_REFERENCE_DATA_DIR/instruments/bfi44_items.csv`` where a team has the right.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from agentbank.core.errors import AgentBankError
from agentbank.instruments.model import Instrument, Item, Option

SCALE = (
    Option(1, "disagree strongly"),
    Option(2, "disagree a little"),
    Option(3, "neither agree nor disagree"),
    Option(4, "agree a little"),
    Option(5, "agree strongly"),
)
PREAMBLE = (
    "Here are statements that may or may not describe you. For each one, say how much you agree or "
    "disagree that it describes you."
)


def _item(key: str, text: str, trait: str, reverse: bool) -> Item:
    return Item(key, "ordinal", text, SCALE, meta={"expert": "psychologist", "trait": trait, "reverse": reverse})


class InstrumentUnavailableError(AgentBankError):
    """An instrument the bank may not ship, absent from the optional reference data of this installation.

    Its message names no path (an API caller reads it); the hint names the folder, for the operator.
    """

    code = "instrument_unavailable"
    status_code = 404


@cache
def load_ipip50() -> Instrument:
    """The IPIP Big-Five factor markers, 50 items on a five-point scale."""
    text = resources.files("agentbank.instruments").joinpath("data/ipip50.csv").read_text()
    items = tuple(
        _item(row["code"].lower(), row["text"], row["factor"], row["keying"].strip() == "-1")
        for row in csv.DictReader(io.StringIO(text))
    )
    return Instrument(
        "ipip50", "IPIP Big-Five Factor Markers (50 items)", PREAMBLE, "ipip.ori.org, public domain", items
    )


@cache
def load_bfi44(reference_dir: Path) -> Instrument:
    """The Big Five Inventory from the reference data (non-commercial research licence)."""
    path = reference_dir / "instruments" / "bfi44_items.csv"
    if not path.is_file():
        raise InstrumentUnavailableError(
            "BFI-44 is not available in this bank: its items (licensed for non-commercial research only) are read "
            "from the optional reference data, which does not hold them",
            hint=f"put instruments/bfi44_items.csv in AGENTBANK_REFERENCE_DATA_DIR (now {reference_dir}), or use "
            "the public-domain IPIP-50 (--instrument ipip50)",
        )
    with path.open(newline="") as handle:
        items = tuple(
            _item(
                f"bfi{int(row['item']):02d}",
                f"{row['stem']} {row['text'].lower()}",
                row["trait"],
                row["reverse_scored"] == "1",
            )
            for row in csv.DictReader(handle)
        )
    return Instrument(
        "bfi44",
        "Big Five Inventory (BFI-44)",
        PREAMBLE,
        "John, Donahue & Kentle 1991; non-commercial research use",
        items,
    )


def score_traits(instrument: Instrument, answers: Mapping[str, int]) -> dict[str, float]:
    """Trait scores (1–5): reverse-keyed items become 6 − x, then each trait's answered items are averaged."""
    totals: dict[str, list[float]] = {}
    for item in instrument.items:
        if item.key not in answers:
            continue
        value = answers[item.key]
        totals.setdefault(item.meta["trait"], []).append(6 - value if item.meta["reverse"] else value)
    return {trait: sum(values) / len(values) for trait, values in totals.items()}
