"""Survey instruments built from real data: the GSS, the Big Five, economic games."""

from __future__ import annotations

from pathlib import Path

from agentbank.core.errors import AgentBankError
from agentbank.instruments.bigfive import load_bfi44, load_ipip50
from agentbank.instruments.games import load_games
from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Instrument, Item, Option

INSTRUMENTS = ("gss", "bfi44", "ipip50", "games")


class UnknownInstrumentError(AgentBankError):
    """An instrument or item that the bank does not know."""

    code = "unknown_instrument"
    status_code = 404


def load_instrument(key: str, reference_dir: Path) -> Instrument:
    """The instrument called ``key``; ``reference_dir`` holds data the bank may not ship (BFI-44)."""
    loaders = {"gss": load_gss, "ipip50": load_ipip50, "games": load_games}
    if key == "bfi44":
        return load_bfi44(reference_dir)
    if key not in loaders:
        raise UnknownInstrumentError(f"no instrument called {key!r}", hint=f"choose one of {', '.join(INSTRUMENTS)}")
    return loaders[key]()


def select_items(instrument: Instrument, keys: list[str]) -> list[Item]:
    """The items named by ``keys``, in that order; an unknown key names itself in the error."""
    items = []
    for key in keys:
        try:
            items.append(instrument.item(key))
        except KeyError:
            raise UnknownInstrumentError(f"{instrument.key} has no item {key!r}") from None
    return items


__all__ = ["INSTRUMENTS", "Instrument", "Item", "Option", "UnknownInstrumentError", "load_instrument", "select_items"]
