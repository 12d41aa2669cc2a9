"""Two-wave human responses: the GSS panels (the same people two years apart), mapped to GSS codes.

The panel files hold title-cased, sometimes abbreviated labels ("Slghtly Conservative", "Moderate");
each is mapped to the instrument's code by its normalized label or a hand-checked alias
(``gss_labels``), and a label that maps to nothing is reported rather than guessed. A respondent absent from a wave
(dropped out) is kept apart from one who was interviewed but gave no answer (not asked on their
ballot, don't know, refused — the public file does not tell these apart).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from agentbank.answering.conditions import DEMOGRAPHIC_ATTITUDES, DEMOGRAPHIC_KEYS
from agentbank.instruments.model import Instrument, Item
from evaluation.datasets import ABSENT, MISSING, Dataset, Response
from evaluation.gss_labels import ALIASES


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


def load_panel(path: Path, instrument: Instrument, items: Sequence[str], presence: str = "sex") -> Dataset:
    """Read a long-format panel file (person × wave rows) for ``items``, in the instrument's codes.

    ``presence`` is an item every interviewed respondent answers, which tells absence from silence.
    Each person's wave-1 demographics (GSS-coded, age in years) come along for demographic agents.
    """
    import pyarrow.parquet as pq

    columns = set(pq.read_schema(path).names)
    chosen = [instrument.item(key) for key in dict.fromkeys(items)]
    demographic = [
        instrument.item(k)
        for k in (*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES)
        if k in columns and k != "age" and k in instrument.item_keys()
    ]
    wanted = ["firstid", "wave", presence, *dict.fromkeys([i.key for i in chosen + demographic])]
    if "age" in columns:
        wanted.append("age")
    table = pq.read_table(path, columns=wanted)
    panel = Dataset(path.stem, hashlib.sha256(path.read_bytes()).hexdigest())
    for row in table.to_pylist():
        person, wave = str(row["firstid"]), int(row["wave"])
        present = row[presence] is not None
        if wave == 1 and present:
            panel.demographics[person] = _demographics(row, demographic)
        for item in chosen:
            label = row[item.key]
            if not present:
                panel.responses.append(Response(person, item.key, wave, None, ABSENT))
            elif label is None:
                panel.responses.append(Response(person, item.key, wave, None, MISSING))
            else:
                code = code_for(str(label), item)
                if code is None:
                    panel.unmapped.setdefault(item.key, set()).add(str(label))
                    panel.responses.append(Response(person, item.key, wave, None, MISSING))
                else:
                    panel.responses.append(Response(person, item.key, wave, code))
    return panel


def _demographics(row: dict, items: Sequence[Item]) -> dict[str, int]:
    out = {}
    age = str(row.get("age") or "").split(" ")[0]  # "89 or Older" is top-coded at 89
    if age.isdigit():
        out["age"] = int(age)
    for item in items:
        if row[item.key] is not None and (code := code_for(str(row[item.key]), item)) is not None:
            out[item.key] = code
    return out
