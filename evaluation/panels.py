"""Two-wave human responses: the GSS panels (the same people two years apart), mapped to GSS codes.

The panel files hold title-cased, sometimes abbreviated labels ("Slghtly Conservative", "Moderate");
each is mapped to the instrument's code by its normalized label, a unique prefix, or a close match,
and a label that maps to nothing is reported rather than guessed. A respondent absent from a wave
(dropped out) is kept apart from one who was interviewed but gave no answer (not asked on their
ballot, don't know, refused — the public file does not tell these apart).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentbank.instruments.model import Instrument, Item

ABSENT = "absent"  # not interviewed in this wave
MISSING = "missing"  # interviewed, no answer to this item


@dataclass(frozen=True)
class Response:
    """One person's answer to one item in one wave: a GSS code, or why there is none."""

    person: str
    item: str
    wave: int
    code: int | None
    status: str = "answered"  # answered | missing | absent


@dataclass
class Panel:
    """Responses of a panel, and the labels that matched no code."""

    name: str
    responses: list[Response] = field(default_factory=list)
    unmapped: dict[str, set[str]] = field(default_factory=dict)

    def people(self, wave: int) -> set[str]:
        """Respondents interviewed in a wave."""
        return {r.person for r in self.responses if r.wave == wave and r.status != ABSENT}

    def answers(self, wave: int) -> dict[str, dict[str, int]]:
        """person → item → code for a wave."""
        out: dict[str, dict[str, int]] = {}
        for r in self.responses:
            if r.wave == wave and r.code is not None:
                out.setdefault(r.person, {})[r.item] = r.code
        return out


def _norm(label: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", label.lower()).split())


def code_for(label: str, item: Item) -> int | None:
    """The code of a panel label: exact (normalized), a unique prefix, or a close match; else None."""
    wanted = _norm(label)
    options = {_norm(o.label): o.code for o in item.options}
    if wanted in options:
        return options[wanted]
    prefixed = [code for text, code in options.items() if text.startswith(wanted) or wanted.startswith(text)]
    if len(prefixed) == 1:
        return prefixed[0]
    close = difflib.get_close_matches(wanted, list(options), n=1, cutoff=0.8)
    if close:
        return options[close[0]]
    if wanted.isdigit() and int(wanted) in options.values():  # scales labelled only at their ends
        return int(wanted)
    return _by_shared_words(wanted, options)


NEGATIONS = {"not", "no", "cannot", "cant", "t", "never", "neither"}


def _by_shared_words(wanted: str, options: dict[str, int]) -> int | None:
    """The one option sharing the most word stems with the label, negations agreeing; else None."""
    words = {w[:5] for w in wanted.split()}
    negated = bool(set(wanted.split()) & NEGATIONS)
    scored = []
    for text, code in options.items():
        if bool(set(text.split()) & NEGATIONS) != negated:
            continue
        shared = len(words & {w[:5] for w in text.split()})
        if shared:
            scored.append((shared, code))
    scored.sort(reverse=True)
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    return scored[0][1]


def load_panel(path: Path, instrument: Instrument, items: Sequence[str], presence: str = "sex") -> Panel:
    """Read a long-format panel file (person × wave rows) for ``items``, in the instrument's codes.

    ``presence`` is an item every interviewed respondent answers, which tells absence from silence.
    """
    import pyarrow.parquet as pq

    chosen = [instrument.item(key) for key in items]
    table = pq.read_table(path, columns=["firstid", "wave", presence, *[i.key for i in chosen]])
    panel = Panel(path.stem)
    for row in table.to_pylist():
        person, wave = str(row["firstid"]), int(row["wave"])
        present = row[presence] is not None
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
