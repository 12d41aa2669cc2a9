"""From what a data file says to the instrument's codes, with one report of everything set aside.

Researchers' GSS files spell answers as labels ("Slghtly Conservative"), as codes, or as codes the
Core codebook does not list (``chldidel`` 3, the nine census divisions in ``region``). Each distinct
value of each column is decided once: a code of the item, a documented recode, or set aside (kept out
of scoring) and counted in the report, so a whole file's problems are seen together, never one error
at a time. Demographics the prompts and cells use but the instrument does not hold as items
(``age``, ``hispanic``) are read here too, and nothing becomes "unknown" without a line saying so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agentbank.instruments.model import Instrument, Item
from evaluation.people.panels import code_for

# Values that mean "no answer" in GSS files, whatever their case: missing, not set aside.
NO_ANSWER = frozenset({"", "na", "n/a", "iap", "dk", "don't know", "dont know", "no answer", "refused", "skipped",
                       "not applicable", "uncodeable", "nan"})  # fmt: skip
# GSS 9-division REGION codes → the Core item's 4 census regions (documented recode).
DIVISION_TO_REGION = {1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 3, 8: 4, 9: 4}
AGE_TOP = 89  # the GSS top-codes age: "89 or older"
# Highest degree from years of school (EDUC), for files without DEGREE: 12 years is high school, two
# years of college a junior college, four a bachelor's, six or more a graduate degree.
EDUC_TO_DEGREE = ((18, 4), (16, 3), (14, 2), (12, 1), (0, 0))
# Columns of GSS files that are about the interview, not the person: read by no one, reported by count.
BOOKKEEPING = frozenset({"ballot", "form", "formwt", "oversamp", "sampcode", "sample", "samptype", "vstrat", "vpsu",
                         "year", "id", "firstid", "wave", "person", "wtssall", "wtssps", "wtsscomp"})  # fmt: skip


@dataclass
class LoadReport:
    """What a file held and what was set aside, in one place (shown once before a run, kept in it)."""

    layout: str = ""
    people: int = 0
    answers: int = 0
    set_aside: dict[str, Counter[str]] = field(default_factory=dict)  # item → value → count
    not_items: Counter[str] = field(default_factory=Counter)  # column or item → values it held
    recodes: Counter[str] = field(default_factory=Counter)  # a documented recode → answers it changed
    demographics: Counter[str] = field(default_factory=Counter)  # demographic → people who gave it
    notes: list[str] = field(default_factory=list)

    def set_aside_share(self, item: str, answered: int) -> float:
        """The share of an item's non-empty values that were set aside."""
        aside = sum(self.set_aside.get(item, Counter()).values())
        return aside / (aside + answered) if aside + answered else 0.0

    def lines(self) -> list[str]:
        """The report as sentences, most important first."""
        out = [f"{self.layout} layout: {self.people} people, {self.answers} answers in the codebook's codes"]
        for item, values in sorted(self.set_aside.items()):
            listed = ", ".join(f"{v!r} ×{n}" for v, n in values.most_common(8))
            more = f" and {len(values) - 8} more" if len(values) > 8 else ""
            out.append(f"set aside, not in the codebook of {item}: {listed}{more}")
        for recode, n in sorted(self.recodes.items()):
            out.append(f"recoded: {recode} ({n})")
        if self.not_items:
            names = ", ".join(sorted(self.not_items)[:12]) + (" …" if len(self.not_items) > 12 else "")
            out.append(f"not items of the instrument, ignored: {len(self.not_items)} ({names})")
        return out + self.notes


Decision = tuple[int | None, str | None]  # the code (None: no answer or set aside), and the recode applied


class Coder:
    """Decides each distinct value of each column once, and counts what it set aside or recoded."""

    def __init__(self, instrument: Instrument, report: LoadReport) -> None:
        self._instrument, self.report = instrument, report
        self._items = set(instrument.item_keys())
        self._decided: dict[tuple[str, str], Decision] = {}
        self._divisions = False

    def knows(self, key: str) -> bool:
        """Whether ``key`` is an item of the instrument or a demographic read here."""
        return key in self._items or key in ("age", "hispanic")

    def prepare(self, key: str, values: set[str]) -> None:
        """Look at a column's distinct values before coding it (a ``region`` column holding codes 5–9
        is the nine census divisions, so all its codes are divisions)."""
        if key == "region":
            self._divisions = any((n := _number(v)) is not None and 5 <= n <= 9 for v in values)

    def code(self, key: str, raw: str) -> int | None:
        """The code of ``raw`` for ``key``, or None (no answer, or set aside and counted)."""
        pair = (key, raw)
        decision = self._decided.get(pair)
        if decision is None:
            text = raw.strip()
            empty = text.lower() in NO_ANSWER
            decision = self._decided[pair] = (None, "") if empty else self._decide(key, text)
        code, recode = decision
        if code is None and recode is None:  # a value, but not one of the item's: set aside
            self.report.set_aside.setdefault(key, Counter())[raw] += 1
        elif recode:
            self.report.recodes[recode] += 1
        return code

    def _decide(self, key: str, text: str) -> Decision:
        if key == "age":
            return _age(text)
        if key == "hispanic":
            return _hispanic(text)
        item = self._instrument.item(key)
        number = _number(text)
        if key == "region" and self._divisions and number is not None:
            region = DIVISION_TO_REGION.get(number)
            return region, "region: census division (1–9) → census region (1–4)" if region else None
        if number is not None and item.options:
            return (number, "") if number in item.codes else (None, None)
        if number is not None:  # numeric items: a number within the item's bounds
            return (number, "") if _within(item, number) else (None, None)
        code = code_for(text, item)
        if code is None:
            return None, None
        if key == "region" and text.lower() not in {o.label for o in item.options}:
            return code, "region: census division → census region"
        return code, ""


def _number(text: str) -> int | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def _within(item: Item, number: int) -> bool:
    return (item.minimum is None or number >= item.minimum) and (item.maximum is None or number <= item.maximum)


def _age(text: str) -> Decision:
    number = _number(text.split(" ")[0].rstrip("+"))
    if number is None or not 18 <= number <= AGE_TOP:
        return None, None
    if _number(text) is None:
        return number, f"age: '{text}' read as {number} (the GSS top-codes age at {AGE_TOP})"
    return number, ""


def _hispanic(text: str) -> Decision:
    """1 not Hispanic, 2 Hispanic: the GSS's origin codes (2–50) and labels are folded to yes."""
    number = _number(text)
    if number is not None:
        if number == 1:
            return 1, ""
        return (2, "hispanic: an origin code (2–50) read as Hispanic") if 2 <= number <= 50 else (None, None)
    if text.lower() in ("not hispanic", "no"):
        return 1, ""
    return 2, "hispanic: an origin label read as Hispanic"


def degree_from_educ(years: int) -> int:
    """The highest degree a number of school years most likely means (a documented approximation)."""
    return next(degree for least, degree in EDUC_TO_DEGREE if years >= least)
