"""Instruments and items as plain values; versions are hashes of their content."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# ``multiple`` (any options, at least one) and ``ranking`` (every option once) come from teams' instruments.
ItemKind = Literal["categorical", "ordinal", "numeric", "open", "multiple", "ranking"]


@dataclass(frozen=True)
class Option:
    """One answer option with its code in the instrument's own coding (GSS codes for the GSS)."""

    code: int
    label: str


@dataclass(frozen=True)
class Item:
    """One question. Categorical and ordinal items have options; numeric items have bounds."""

    key: str
    kind: ItemKind
    question: str
    options: tuple[Option, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def version(self) -> str:
        """A hash of everything that changes what the item asks."""
        content = [self.key, self.kind, self.question, [asdict(o) for o in self.options], self.minimum, self.maximum]
        return hashlib.sha256(json.dumps(content).encode()).hexdigest()[:12]

    @property
    def codes(self) -> list[int]:
        """The valid option codes, in the instrument's order."""
        return [o.code for o in self.options]

    def labelled(self, value: Any) -> Any:
        """An answer's labels: an option's label, a list of labels for a list of codes; None for a number."""
        if isinstance(value, list):
            return [self.label(v) if v in self.codes else None for v in value]
        if self.options and isinstance(value, int) and value in self.codes:
            return self.label(value)
        return None

    def label(self, code: int) -> str:
        """The label of an option code."""
        for option in self.options:
            if option.code == code:
                return option.label
        raise KeyError(code)

    def normalized(self, value: float) -> float:
        """The answer on a 0–1 scale: by option rank for ordinal items, by bounds for numeric ones.

        Categorical items may carry an explicit map (a game's cooperate/defect) in ``meta['scores']``.
        """
        scores = self.meta.get("scores")
        if scores is not None:
            return float(scores[str(int(value))])
        if self.kind == "numeric" and self.minimum is not None and self.maximum is not None:
            return (float(value) - self.minimum) / (self.maximum - self.minimum)
        if self.kind == "ordinal":
            return self.codes.index(int(value)) / (len(self.codes) - 1)
        raise ValueError(f"item {self.key} has no 0–1 scale")


@dataclass(frozen=True)
class Instrument:
    """A versioned set of items with the preamble a respondent reads first."""

    key: str
    title: str
    preamble: str
    source: str
    items: tuple[Item, ...]

    @property
    def version(self) -> str:
        """A hash of the preamble and every item's version."""
        content = [self.key, self.preamble, [item.version for item in self.items]]
        return hashlib.sha256(json.dumps(content).encode()).hexdigest()[:12]

    def item_keys(self) -> list[str]:
        """The keys of the items, in order."""
        return [item.key for item in self.items]

    def item(self, key: str) -> Item:
        """The item with this key (case-insensitive, as GSS mnemonics are written both ways)."""
        wanted = key.strip().lower()
        for item in self.items:
            if item.key.lower() == wanted:
                return item
        raise KeyError(key)
