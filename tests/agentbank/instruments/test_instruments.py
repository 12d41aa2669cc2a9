from dataclasses import replace
from pathlib import Path

import pytest

from agentbank.instruments import UnknownInstrumentError, load_instrument, select_items
from agentbank.instruments.bigfive import InstrumentUnavailableError, score_traits
from agentbank.instruments.gss import survey_items

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def test_gss_items_by_mnemonic_with_codes():
    gss = load_instrument("gss", REFERENCE)
    assert len(gss.items) == 287
    kinds = [i.meta["gss_kind"] for i in gss.items]
    assert (kinds.count("attitude"), kinds.count("behavior"), kinds.count("demographic")) == (155, 18, 114)
    assert len(survey_items(gss)) == 173
    cappun = gss.item("CAPPUN")
    assert cappun.question == "Do you favor or oppose the death penalty for persons convicted of murder?"
    assert [(o.code, o.label) for o in cappun.options] == [(1, "favor"), (2, "oppose")]
    assert cappun.kind == "categorical"
    polviews = gss.item("polviews")
    assert polviews.kind == "ordinal" and polviews.codes == [1, 2, 3, 4, 5, 6, 7]
    assert polviews.normalized(4) == 0.5
    assert gss.item("partyid").kind == "categorical"  # "other party" breaks the scale
    with pytest.raises(UnknownInstrumentError, match="NOSUCH"):
        select_items(gss, ["cappun", "NOSUCH"])


def test_versions_follow_content():
    gss = load_instrument("gss", REFERENCE)
    item = gss.item("cappun")
    assert item.version == load_instrument("gss", REFERENCE).item("cappun").version
    assert replace(item, question=item.question + "?").version != item.version
    assert replace(gss, items=gss.items[:-1]).version != gss.version


@pytest.mark.skipif(not (REFERENCE / "instruments").is_dir(), reason="the optional reference data is absent")
def test_bfi44_scoring_key():
    bfi = load_instrument("bfi44", REFERENCE)
    assert len(bfi.items) == 44
    reversed_e = [i.key for i in bfi.items if i.meta["trait"] == "extraversion" and i.meta["reverse"]]
    assert reversed_e == ["bfi06", "bfi21", "bfi31"]
    answers = {i.key: 5 for i in bfi.items}
    scores = score_traits(bfi, answers)
    # Extraversion: 5 non-reversed items at 5, 3 reversed at 6-5=1 → (25 + 3) / 8.
    assert scores["extraversion"] == pytest.approx(28 / 8)
    assert scores["openness"] == pytest.approx((8 * 5 + 2 * 1) / 10)


def test_bfi44_needs_the_reference_data(tmp_path):
    with pytest.raises(InstrumentUnavailableError) as caught:
        load_instrument("bfi44", tmp_path / "nowhere")
    assert "optional reference data" in caught.value.message and "nowhere" not in caught.value.message
    assert str(tmp_path / "nowhere") in caught.value.hint and "IPIP-50" in caught.value.hint


def test_ipip50_and_games():
    ipip = load_instrument("ipip50", REFERENCE)
    assert len(ipip.items) == 50 and ipip.item("EXT2").meta["reverse"]
    games = load_instrument("games", REFERENCE)
    assert [i.key for i in games.items] == [
        "dictator", "trust_sender", "trust_receiver", "public_goods", "prisoners_dilemma",
    ]  # fmt: skip
    assert games.item("dictator").normalized(5) == 1.0
    assert games.item("trust_sender").maximum == 3 and games.item("trust_receiver").maximum == 9
    assert games.item("public_goods").normalized(1) == 0.25
    assert games.item("prisoners_dilemma").normalized(1) == 1.0
    assert games.item("prisoners_dilemma").normalized(2) == 0.0
