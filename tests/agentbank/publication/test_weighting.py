"""Post-stratification weights: raked to the margins, applied by hand-checkable arithmetic, targets checked."""

import ast
import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from agentbank.core.errors import InvalidRequestError
from agentbank.publication.breakdowns import BREAKDOWNS, UNKNOWN
from agentbank.publication.weighting.raking import RakingError, rake
from agentbank.publication.weighting.shares import weigh, wilson
from agentbank.publication.weighting.targets import RAKED, Targets, default_targets, load_targets, parse_targets

DATA = Path("../shared/data")


def raked_shares(members, weights, position):
    totals: Counter = Counter()
    for member in members:
        totals[member[position]] += weights.of(member)
    whole = sum(totals.values())
    return {category: total / whole for category, total in totals.items()}


def test_raking_meets_every_margin_within_a_tenth_of_a_point():
    rng = random.Random(7)
    # A quota sample that leans young, male and white, with some categories unknown.
    lean = {"sex": [0.7, 0.3], "age_band": [0.5, 0.3, 0.15, 0.05], "race": [0.85, 0.1, 0.05]}
    members = []
    for _ in range(600):
        member = []
        for d in RAKED:
            known = BREAKDOWNS[d].categories[:-1]
            member.append(UNKNOWN if rng.random() < 0.04 else rng.choices(known, weights=lean.get(d))[0])
        members.append(tuple(member))
    targets = default_targets()
    weights = rake(members, RAKED, targets)
    for position, d in enumerate(RAKED):
        achieved = raked_shares(members, weights, position)
        unknown = sum(1 for m in members if m[position] == UNKNOWN) / len(members)
        assert achieved[UNKNOWN] == pytest.approx(unknown, abs=1e-6)  # the unknown keep their own share
        for category, target in targets.margins[d].items():
            assert abs(achieved[category] / (1 - unknown) - target) < 0.001, (d, category)
    mean = sum(weights.of(m) for m in members) / len(members)
    assert mean == pytest.approx(1.0)


def test_a_weighted_share_computed_by_hand():
    # 30 men and 10 women raked to half and half: men weigh 2/3, women 2 (mean weight one).
    members = [("male",)] * 30 + [("female",)] * 10
    weights = rake(members, ("sex",), Targets("test", {"sex": {"male": 0.5, "female": 0.5}}))
    assert weights.of(("male",)) == pytest.approx(2 / 3, abs=1e-5)
    assert weights.of(("female",)) == pytest.approx(2.0, abs=1e-5)
    # 20 men and 2 women answered 1; 10 men and 8 women answered 2.
    counts = {(("male",), 1): 20, (("male",), 2): 10, (("female",), 1): 2, (("female",), 2): 8}
    table = weigh(counts, lambda profile: (), weights.of)
    # (20·2/3 + 2·2) / (30·2/3 + 10·2) = 17⅓ / 40
    assert table.share((), 1) == pytest.approx((20 * 2 / 3 + 2 * 2) / 40, abs=1e-5)
    group = table.groups[()]
    # Kish: 40 · (30·(2/3)² + 10·2²) / 40² = 4/3, so 30 effective agents of 40.
    assert group.deff == pytest.approx(4 / 3, abs=1e-4)
    assert group.effective_n == pytest.approx(30, abs=1e-3)
    by_sex = weigh(counts, lambda profile: profile, weights.of)
    assert by_sex.share(("female",), 1) == pytest.approx(0.2)  # within a cell of equal weights: unweighted
    assert by_sex.groups[("female",)].deff == pytest.approx(1.0)


def test_wilson_interval_by_hand():
    # p = 0.5 over 100: centre 0.5, half-width 1.96·√(0.0025 + 1.96²/40000) / (1 + 1.96²/100)
    low, high = wilson(0.5, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    assert wilson(0.0, 10)[0] == 0.0 and wilson(0.0, 10)[1] > 0.2  # a zero is still uncertain
    assert wilson(0.3, 0) is None


def test_a_category_nobody_is_in_is_said_and_the_others_share_its_target():
    members = [("male",)] * 5 + [(UNKNOWN,)] * 5
    weights = rake(members, ("sex",), default_targets())
    assert weights.of(("male",)) == pytest.approx(1.0)  # all the known are men: nothing to adjust
    assert any("no agent is female" in note for note in weights.notes)
    with pytest.raises(RakingError):
        rake([], ("sex",), default_targets())


def test_targets_files_are_checked(tmp_path):
    good = tmp_path / "acs.json"
    good.write_text(json.dumps({"source": "ACS 2023", "margins": {"sex": {"male": 49, "female": 51}}}))
    targets = load_targets(good)
    assert targets.source == "ACS 2023" and targets.margins["sex"] == pytest.approx({"male": 0.49, "female": 0.51})
    for body, words in [
        ({"source": "x", "margins": {"shoe_size": {"9": 1}}}, "shoe_size"),
        ({"source": "x", "margins": {"sex": {"males": 1}}}, "males"),
        ({"source": "x", "margins": {"sex": {"male": -1, "female": 2}}}, "non-negative"),
        ({"margins": {}}, "source"),
    ]:
        with pytest.raises(InvalidRequestError, match=words):
            parse_targets(json.dumps(body))
    with pytest.raises(InvalidRequestError, match="cannot read"):
        load_targets(tmp_path / "missing.json")
    with pytest.raises(InvalidRequestError, match="not a valid targets file"):
        parse_targets("{")


def test_the_default_margins_are_the_reference_datas():
    """The shipped margins are the GSS 2022 respondents' (and Park et al.'s GSS profiles' ages), recomputed."""
    core = {row["variable"]: row for row in json.loads((DATA / "gss" / "gss_core_items.json").read_text())}
    shipped = default_targets().margins
    labels = {"education": ("degree", {"associate/junior college": "junior college", "bachelor's": "bachelor"})}
    for key in ("sex", "race", "education", "region"):
        variable, renamed = labels.get(key, (key, {}))
        counts = core[variable]["counts_2022"]
        counts = ast.literal_eval(counts) if isinstance(counts, str) else counts
        valid = {
            renamed.get(label, label): n for label, n in counts.items() if renamed.get(label, label) in shipped[key]
        }
        total = sum(valid.values())
        assert shipped[key] == pytest.approx({c: n / total for c, n in valid.items()}, abs=2e-4), key
    with (DATA / "personas" / "genagents_gss_demographic_agents.csv").open() as f:
        bands = Counter(BREAKDOWNS["age_band"].classify({"age": row["age"]}) for row in csv.DictReader(f))
    bands.pop(UNKNOWN, None)
    total = sum(bands.values())
    assert shipped["age_band"] == pytest.approx({b: n / total for b, n in bands.items()}, abs=2e-4)
