"""What the participant's self-report battery asks, page by page.

After the interview each participant answers, as Park et al.'s participants did, a short survey of
their own: who they are (the demographics the bank's breakdowns and demographic agents use), a subset
of the GSS, a Big Five inventory and the five economic games. Their answers are what the bank scores
its agents against; a retest two weeks later is the ceiling the scores are normalized by.

Items keep their instrument's key and codes (``gss:cappun``, ``ipip50:ext1``, ``games:dictator``), so
the answers read straight into the evaluation. Two demographics are not GSS items (age, Hispanic
origin) and live in the battery's own ``about`` instrument; the GSS's demographic items are asked in
words a person reads about themself, since the codebook's wording is an instruction to an interviewer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

from agentbank.instruments import load_instrument
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.instruments.model import Instrument, Item, Option

GssChoice = Literal["default", "all"]
BigFiveChoice = Literal["ipip50", "bfi44"]

DEFAULT_GSS_ITEMS = 60
GSS_PAGE = 5
BIG_FIVE_PAGE = 10
ABOUT_WAVE_ONLY = "about"  # demographics are facts, not retest material: asked in wave 1 only

# The GSS demographics in the participant's own words (the codes and options are the GSS's).
SELF_REPORT = {
    "sex": "What is your sex?",
    "race": "What race do you consider yourself?",
    "region": "In which part of the United States do you live?",
    "degree": "What is the highest degree you have earned?",
    "class": "If you had to name your social class, which would you say you belong in?",  # blank in the codebook
}
# Subjective class and health are asked here too: the open tier's breakdowns read them as demographics.
ABOUT_GSS = ("sex", "race", "region", "degree", "marital", "wrkstat", "relig", "polviews", "partyid", "class", "health")
AGE = Item("age", "numeric", "How old are you (in years)?", minimum=18, maximum=99)
HISPANIC_ITEM = Item(
    "hispanic",
    "categorical",
    "Are you of Hispanic, Latino or Spanish origin?",
    options=(Option(2, "yes"), Option(1, "no")),  # the codes of the demographic line's HISPANIC
)


@dataclass(frozen=True)
class BatteryItem:
    """One question of the battery: its instrument and the item as that instrument codes it."""

    instrument: str
    item: Item

    @property
    def key(self) -> str:
        """The key answers are stored under: ``instrument:item``."""
        return f"{self.instrument}:{self.item.key}"


@dataclass(frozen=True)
class Page:
    """One screen: a section's heading, its preamble and a few items."""

    section: str
    title: str
    preamble: str
    items: tuple[BatteryItem, ...]


@dataclass(frozen=True)
class Battery:
    """The pages of a battery, in order, and a lookup of its items by key."""

    pages: tuple[Page, ...]

    def item(self, key: str) -> BatteryItem:
        """The item stored under ``key``; KeyError when the battery has none."""
        for page in self.pages:
            for entry in page.items:
                if entry.key == key:
                    return entry
        raise KeyError(key)

    def for_wave(self, wave: int, seed: int) -> tuple[Page, ...]:
        """The pages of a wave: the retest leaves out ``about`` and shuffles each page's items (seeded, so
        a reload shows the same order) so that a person cannot answer from the screen's layout."""
        if wave == 1:
            return self.pages
        shuffle = random.Random(seed)  # noqa: S311 - an order on screen, not a secret
        pages = []
        for page in self.pages:
            if page.section == ABOUT_WAVE_ONLY:
                continue
            items = list(page.items)
            shuffle.shuffle(items)
            pages.append(replace(page, items=tuple(items)))
        return tuple(pages)

    def keys(self, wave: int) -> list[str]:
        """The keys a wave asks, in page order."""
        return [entry.key for page in self.for_wave(wave, 0) for entry in page.items]


def chosen_gss_items(gss: Instrument, count: int = DEFAULT_GSS_ITEMS) -> list[Item]:
    """``count`` GSS attitude and behaviour items covering as many of its topics as they can: one item
    of each topic in turn (the codebook's order within a topic), largest topics first."""
    by_topic: dict[str, list[Item]] = {}
    for item in survey_items(gss):
        if item.key not in ABOUT_GSS:
            by_topic.setdefault(str(item.meta.get("topic", item.key)), []).append(item)
    queues = sorted(by_topic.values(), key=lambda items: -len(items))
    chosen: list[Item] = []
    while len(chosen) < count and any(queues):
        for queue in queues:
            if queue and len(chosen) < count:
                chosen.append(queue.pop(0))
    order = {item.key: n for n, item in enumerate(gss.items)}
    return sorted(chosen, key=lambda item: (str(item.meta.get("topic")), order[item.key]))


def _about(gss: Instrument) -> list[Page]:
    items = [BatteryItem("about", AGE)]
    for key in ABOUT_GSS:
        item = gss.item(key)
        items.append(BatteryItem("gss", replace(item, question=SELF_REPORT.get(key, _asked(item.question)))))
        if key == "race":
            items.append(BatteryItem("about", HISPANIC_ITEM))
    intro = "A few questions about you. They let the bank count you in the right groups of its survey tables."
    half = (len(items) + 1) // 2  # two short pages rather than one long one
    return [
        Page("about", "About you", intro, tuple(items[:half])),
        Page("about", "About you", intro, tuple(items[half:])),
    ]


def _asked(question: str) -> str:
    """The codebook's wording without its sub-question letter ("A. We hear a lot of talk...")."""
    return re.sub(r"^[A-Z]\.\s+", "", question)


def _pages(section: str, title: str, instrument: Instrument, items: list[Item], size: int) -> list[Page]:
    return [
        Page(section, title, instrument.preamble, tuple(BatteryItem(instrument.key, i) for i in items[n : n + size]))
        for n in range(0, len(items), size)
    ]


@cache
def build_battery(gss_items: GssChoice, big_five: BigFiveChoice, reference_dir: Path) -> Battery:
    """The battery the settings choose: about you, the GSS subset (or all 173 items), the Big Five
    inventory and the five games."""
    gss = load_gss()
    chosen = chosen_gss_items(gss) if gss_items == "default" else [
        item for item in survey_items(gss) if item.key not in ABOUT_GSS]  # fmt: skip
    inventory = load_instrument(big_five, reference_dir)
    games = load_instrument("games", reference_dir)
    pages = [
        *_about(gss),
        *_pages(
            "gss",
            "Your views",
            replace(gss, items=()),
            [replace(i, question=_asked(i.question)) for i in chosen],
            GSS_PAGE,
        ),
        *_pages("big_five", "How you see yourself", inventory, list(inventory.items), BIG_FIVE_PAGE),
        *_pages("games", "Decisions about money", games, list(games.items), 1),
    ]
    return Battery(tuple(pages))
