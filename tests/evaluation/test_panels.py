"""The GSS panels on the real files: respondents per wave, and labels mapped to the codebook's codes."""

from pathlib import Path

import pytest

from agentbank.instruments.gss import load_gss
from evaluation.panels import ABSENT, MISSING, code_for, load_panel

PANELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gss_panels"
ITEMS = ["cappun", "polviews", "natenvir", "eqwlth", "trust", "spkath", "partyid"]


@pytest.fixture(scope="module")
def panel06():
    return load_panel(PANELS / "gss_panel06_long.parquet", load_gss(), ITEMS)


def test_respondents_per_wave(panel06):
    # 2,000 respondents in 2006; those re-interviewed in 2008 and 2010.
    assert [len(panel06.people(w)) for w in (1, 2, 3)] == [2000, 1536, 1276]
    panel08 = load_panel(PANELS / "gss_panel08_long.parquet", load_gss(), ["cappun"])
    assert len(panel08.people(1)) == 2023


def test_codes_match_the_codebook(panel06):
    wave1 = [r for r in panel06.responses if r.wave == 1 and r.item == "cappun"]
    counts = {code: sum(1 for r in wave1 if r.code == code) for code in (1, 2)}
    assert set(r.code for r in wave1 if r.code is not None) <= {1, 2}
    assert counts[1] > counts[2] > 0  # most favoured the death penalty in 2006
    gss = load_gss()
    assert code_for("Slghtly Conservative", gss.item("polviews")) == 5
    assert code_for("Moderate", gss.item("polviews")) == 4
    assert code_for("Extremely Liberal", gss.item("polviews")) == 1
    assert code_for("Too Little", gss.item("natenvir")) == 1
    assert code_for("4", gss.item("eqwlth")) == 4  # a scale labelled only at its ends
    assert code_for("Allowed", gss.item("spkath")) == 1 and code_for("Not Allowed", gss.item("spkath")) == 2


def test_absent_and_missing_are_kept_apart(panel06):
    statuses = {r.status for r in panel06.responses if r.wave == 3}
    assert {ABSENT, MISSING, "answered"} <= statuses
    absent = {r.person for r in panel06.responses if r.wave == 3 and r.status == ABSENT}
    assert len(absent) == 2000 - 1276
    assert all(r.code is None for r in panel06.responses if r.status != "answered")
