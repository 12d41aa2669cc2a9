"""The combination of agents and baselines: never worse than the best baseline, better than both where the
agents know their people, and never reading the scored person's own answers."""

from __future__ import annotations

import random

import pytest

import evaluation.scoring.combination as combination
from agentbank.instruments.gss import load_gss
from evaluation.runs.records import ResultRow
from evaluation.scoring.combination import COMBINED, combined_rows, cross_fit, folds_of
from evaluation.scoring.findings import add_findings
from evaluation.scoring.scores import person_scores, summarize

GSS = load_gss()
# Two-option and three-option items, some where nearly everyone gives one answer (there the population's
# mode beats a model that knows people with 30% noise) and some evenly split (there the model wins).
SKEWED = ["cappun", "gunlaw", "grass", "spkath", "colath", "libath"]
EVEN = ["natenvir", "natheal", "natcity", "natcrime", "natdrug", "nateduc"]
PEOPLE = [f"p{n:03d}" for n in range(240)]


def prior(item: str) -> list[float]:
    k = len(GSS.item(item).codes)
    return [0.9, *[0.1 / (k - 1)] * (k - 1)] if item in SKEWED else [1 / k] * k


def panel(agent: str, noise: float = 0.3, seed: int = 7) -> list[ResultRow]:
    """People's first answers and retests, the population mode, and a scripted agent: ``blind`` (the first
    option for everyone, as the bank's scripted model answers), ``guesses`` (an option drawn as people's are,
    whoever asks: it varies across people and says nothing of them) or ``knows`` (the person's answer, else
    with chance ``noise`` an option drawn uniformly)."""
    rng = random.Random(seed)
    rows = []
    for item in SKEWED + EVEN:
        codes = GSS.item(item).codes
        mode = codes[0]
        for person in PEOPLE:
            truth = rng.choices(codes, prior(item))[0]
            retest = truth if rng.random() < 0.8 else rng.choice(codes)
            said = truth if rng.random() >= noise else rng.choice(codes)
            if agent != "knows":
                said = codes[0] if agent == "blind" else rng.choices(codes, prior(item))[0]
            rows.append(ResultRow(person, item, "population-mode", mode, truth, retest))
            rows.append(ResultRow(person, item, "survey", said, truth, retest))
    return rows


def scored(rows: list[ResultRow]) -> dict:
    made, served = combined_rows(rows, seed=0)
    everything = rows + made
    scores = person_scores(everything, GSS)
    summary = summarize(scores, everything, {}, min_group=1)
    add_findings(summary, everything, scores, GSS, {}, served=served)
    return summary


@pytest.mark.parametrize("agent", ["blind", "guesses"])
def test_with_a_person_blind_model_it_is_the_best_baseline(agent):
    summary = scored(panel(agent))
    conditions, versus = summary["conditions"], summary["combination"]["baseline"]
    low, high = conditions["population-mode"]["normalized_accuracy_ci"]
    assert low <= conditions[COMBINED]["normalized_accuracy"] <= high
    assert versus["condition"] == "population-mode" and not versus["below"]
    assert versus["interval"][0] <= 0 <= versus["interval"][1] or versus["gain"] >= 0


def test_with_a_model_that_knows_the_person_it_beats_both():
    summary = scored(panel("knows", noise=0.3))
    combined = summary["combination"]
    assert combined["baseline"]["interval"][0] > 0, "above the best baseline beyond its interval"
    assert combined["agent"]["condition"] == "survey" and combined["agent"]["interval"][0] > 0, "above the agent"
    # It served the baseline on the skewed items and the agent on the even ones.
    assert set(combined["served"]) == {"population-mode", "survey"}
    assert summary["sentences"][0].startswith("The combination served")


def test_it_never_reads_the_scored_persons_own_answers(monkeypatch):
    rows = panel("knows", noise=0.3)
    fits = []
    real = combination.fit_choice

    def spying(answers, truth, people):
        fits.append((set(truth), set(people)))
        return real(answers, truth, people)

    monkeypatch.setattr(combination, "fit_choice", spying)
    served, _ = combined_rows(rows, seed=3)
    dealt = folds_of(PEOPLE, 3)
    assert len(fits) == len(dealt) == 10
    for fold, (read, fit_on) in zip(dealt, fits, strict=True):
        assert read == fit_on == set(PEOPLE) - set(fold), "a fold is served by a choice fit on everyone else"

    # Changing one person's own answers changes nothing they are served.
    victim = PEOPLE[5]
    changed = [ResultRow(r.person, r.item, r.condition, r.predicted,
                         GSS.item(r.item).codes[-1] if r.person == victim else r.actual, r.retest)
               for r in rows]  # fmt: skip
    again, _ = combined_rows(changed, seed=3)
    mine = {(r.item, r.predicted) for r in served if r.person == victim}
    assert mine == {(r.item, r.predicted) for r in again if r.person == victim}


def test_a_choice_that_read_the_persons_own_answers_would_be_caught(monkeypatch):
    """The test above fails on a combination that serves whichever source matched the person."""
    rows = panel("knows", noise=0.3)

    def cheating(answers, truth, *, seed=0, folds=10):  # serves whichever source the person's own answer matches
        served = {p: {i: next(((c, s) for s, c in sorted(src.items()) if c == truth[p][i]),
                              (next(iter(src.values())), "x")) for i, src in items.items()}
                  for p, items in answers.items()}  # fmt: skip
        return served, []

    monkeypatch.setattr(combination, "cross_fit", cheating)
    victim = PEOPLE[5]
    before, _ = combined_rows(rows)
    changed = [ResultRow(r.person, r.item, r.condition, r.predicted,
                         GSS.item(r.item).codes[-1] if r.person == victim else r.actual, r.retest)
               for r in rows]  # fmt: skip
    after, _ = combined_rows(changed)
    assert {(r.item, r.predicted) for r in before if r.person == victim} != {
        (r.item, r.predicted) for r in after if r.person == victim
    }


def test_folds_and_a_single_person():
    dealt = folds_of(["a", "b", "c"], 0)
    assert sorted(p for fold in dealt for p in fold) == ["a", "b", "c"] and len(dealt) == 3
    lone = {"a": {"cappun": {"population-mode": 1, "survey": 2}}}
    assert cross_fit(lone, {"a": {"cappun": 2}}) == ({}, [])


@pytest.mark.parametrize("noise", [0.0, 1.0])
def test_a_perfect_model_is_served_and_a_useless_one_is_not(noise):
    summary = scored(panel("knows", noise=noise))
    served = summary["combination"]["served"]
    assert max(served, key=served.get) == ("survey" if noise == 0.0 else "population-mode")


def test_two_close_baselines_do_not_pull_it_below_the_best():
    """Where two baselines are about as good on an item, choosing each item's "most accurate on other people"
    is anti-correlated with the held-out fold (leaving a fold out tilts the rest the other way), and the
    combination fell below the best baseline (seen on the 2008 panel with a person-blind model). It serves
    the best baseline unless another source is clearly better on the item."""
    rng = random.Random(11)
    rows = []
    for item in EVEN:
        codes = GSS.item(item).codes
        for person in PEOPLE:
            truth = codes[0] if rng.random() < 0.5 else codes[1]
            retest = truth if rng.random() < 0.8 else rng.choice(codes)
            rows.append(ResultRow(person, item, "population-mode", codes[0], truth, retest))
            rows.append(ResultRow(person, item, "cell-mode", codes[1], truth, retest))
            rows.append(ResultRow(person, item, "survey", codes[0], truth, retest))
    summary = scored(rows)
    versus = summary["combination"]["baseline"]
    assert not versus["below"], versus
    assert abs(versus["gain"]) < 0.01, versus
