"""The GSS panels' labels mapped to GSS codes.

The panel files hold title-cased, sometimes abbreviated labels ("Slghtly Conservative", "Moderate");
each is mapped to the instrument's code by its normalized label or a hand-checked alias
(``gss_labels``), and a label that maps to nothing is reported rather than guessed.
"""

from __future__ import annotations

import re

from agentbank.instruments.model import Item
from evaluation.people.gss_labels import ALIASES


def _norm(label: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", label.lower()).split())


def code_for(label: str, item: Item) -> int | None:
    """The code of a panel label: the codebook's own wording, a listed alias, or a bare number; else None."""
    wanted = _norm(label)
    options = {_norm(o.label): o.code for o in item.options}
    if wanted in options:
        return options[wanted]
    alias = ALIASES.get(item.key, {}).get(wanted)
    if alias is not None:
        return alias
    codes = {o.code for o in item.options}
    if wanted.isdigit() and int(wanted) in codes:  # scales labelled only at their ends
        return int(wanted)
    return None
