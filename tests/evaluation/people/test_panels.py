"""The GSS panels as shipped: respondents per wave, and labels mapped to the codebook's codes."""

import pytest

from agentbank.instruments.gss import load_gss, survey_items
from evaluation.people.panel_files import panel_path
from evaluation.people.panels import code_for
from evaluation.people.waves import ABSENT, MISSING, load_dataset

ITEMS = ["cappun", "polviews", "natenvir", "eqwlth", "trust", "spkath", "partyid"]


@pytest.fixture(scope="module")
def panel06():
    return load_dataset("gss-panel06", load_gss(), ITEMS)


def test_respondents_per_wave(panel06):
    # 2,000 respondents in 2006; those re-interviewed in 2008 and 2010.
    assert [len(panel06.people(w)) for w in (1, 2, 3)] == [2000, 1536, 1276]
    panel08 = load_dataset("gss-panel08", load_gss(), ["cappun"])
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
    # Abbreviations that similarity matching had got wrong, now mapped by hand.
    assert code_for("Lt High School", gss.item("degree")) == 0
    assert code_for("High School", gss.item("degree")) == 1
    assert code_for("Oppose Pref", gss.item("affrmact")) == 3
    assert code_for("Illegal to all", gss.item("pornlaw")) == 1
    assert code_for("Lt Once a Week", gss.item("pray")) == 5
    assert code_for("Ind,near Dem", gss.item("partyid")) == 2
    assert code_for("E. Nor. Central", gss.item("region")) == 2  # census division → region
    assert code_for("Somewhere else entirely", gss.item("region")) is None  # reported, not guessed


@pytest.mark.parametrize("name", ["gss-panel06", "gss-panel08"])
def test_every_survey_label_maps_but_one_item(name):
    """All labels of every survey item map to a code, except CHLDIDEL's numbers, which the Core
    codebook does not list as options (so the item is never chosen for a run)."""
    import pyarrow.parquet as pq

    gss = load_gss()
    columns = set(pq.read_schema(panel_path(name)).names)
    items = [i.key for i in survey_items(gss) if i.key in columns]
    panel = load_dataset(name, gss, items)
    assert len(items) > 150
    print(panel.report.lines())
    assert set(panel.report.set_aside) == {"chldidel"}


def test_wave_one_demographics(panel06):
    people = panel06.people(1)
    with_sex = [p for p in people if "sex" in panel06.demographics.get(p, {})]
    assert len(with_sex) == len(people)
    ages = [d["age"] for d in panel06.demographics.values() if "age" in d]
    assert len(ages) > 1900 and min(ages) >= 18 and max(ages) <= 89
    assert {d.get("degree") for d in panel06.demographics.values()} >= {0, 1, 2, 3, 4}


def test_absent_and_missing_are_kept_apart(panel06):
    statuses = {r.status for r in panel06.responses if r.wave == 3}
    assert {ABSENT, MISSING, "answered"} <= statuses
    absent = {r.person for r in panel06.responses if r.wave == 3 and r.status == ABSENT}
    assert len(absent) == 2000 - 1276
    assert all(r.code is None for r in panel06.responses if r.status != "answered")
