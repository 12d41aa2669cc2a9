"""The open tier's protection on 1,000 agents × 173 GSS items: what a release costs to cut, what its noise
costs a researcher, and what it leaves an attacker with accomplices.

1. A bank of 1,000 agents with demographics drawn from the GSS margins the weights use, and answers to
   173 items that depend on party, age and education (so tables have something to show), every answer
   and demographic sealed with its participant's own key, as the bank stores them.
2. The cut: seconds and the process's peak memory, for every table of every item (overall, 12 one-way,
   66 two-way) and their weighted totals.
3. The researcher's loss: every shown share against the exact share of the same group, in points, by the
   group's true size (mean and 95th percentile of the absolute error), and how many groups are hidden.
4. The attacker: a victim and nine accomplices withdraw together, a release is cut, and the attacker
   subtracts every table of the two releases, less what the accomplices contributed (the attack of
   ``tests/app/api/release_attacks``): the victim's answers named, beside the item's mode and the bound.

Run: python -m benchmarks.bench_release_privacy [--agents N] [--victims V]
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

import numpy as np
import psutil
from rich.console import Console
from sqlalchemy import create_engine, select, update
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.building.transcripts import seal_demographics
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Agent, Participant, Release, ReleaseTable, Transcript
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.distributions import DIMENSIONS, as_distribution
from agentbank.open_tier.population import store_population_answers
from agentbank.open_tier.privacy import Budget, guess_bound
from agentbank.open_tier.releases import Policy, cut_release
from agentbank.open_tier.weighting.targets import default_targets
from agentbank.statuses import AgentStatus, ConsentStatus
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

SECRET = "benchmark-secret-" * 3
ITEMS = 173
BINS = ((0, 25), (25, 50), (50, 100), (100, 250), (250, 500), (500, 10**9))
ACCOMPLICES = 9
# Codes for the demographics the breakdowns read that the weights' margins do not give.
OTHER = {"partyid": range(0, 7), "polviews": range(1, 8), "hispanic": (1, 1, 1, 1, 2), "marital": range(1, 6),
         "wrkstat": range(1, 9), "class": range(1, 5), "health": range(1, 5)}  # fmt: skip
AGES = {"18-29": (18, 29), "30-44": (30, 44), "45-64": (45, 64), "65+": (65, 89)}
CODES = {"sex": {"male": 1, "female": 2}, "race": {"white": 1, "black": 2, "other": 3},
         "education": {"less than high school": 0, "high school": 1, "junior college": 2, "bachelor": 3,
                       "graduate": 4}, "region": {"northeast": 1, "midwest": 2, "south": 3, "west": 4}}  # fmt: skip


def person(rng: random.Random) -> dict[str, int]:
    """Demographics drawn from the GSS margins the bank weights to (and uniform codes for the rest)."""
    margins = default_targets().margins
    pick = {d: rng.choices(list(m), weights=list(m.values()))[0] for d, m in margins.items()}
    low, high = AGES[pick["age_band"]]
    out = {"age": rng.randint(low, high)}
    out |= {"sex": CODES["sex"][pick["sex"]], "race": CODES["race"][pick["race"]],
            "degree": CODES["education"][pick["education"]], "region": CODES["region"][pick["region"]]}  # fmt: skip
    out |= {k: rng.choice(list(v)) for k, v in OTHER.items()}
    return out


def answers(rng: random.Random, demographics: dict[str, int], items: list) -> dict[str, int]:
    """Each item's answer leans by party, age and education (a different way per item)."""
    out = {}
    for n, item in enumerate(items):
        codes = item.codes
        lean = ((demographics["partyid"] - 3) * (1 if n % 3 else -1) + (demographics["age"] - 50) / 15 * (n % 2)
                + (demographics["degree"] - 2) * (n % 5 == 0))  # fmt: skip
        weights = [math.exp(-abs(i - (len(codes) - 1) / 2 - lean * 0.3)) for i in range(len(codes))]
        out[item.key] = rng.choices(codes, weights=weights)[0]
    return out


def populate(session: Session, keys: KeyRing, agents: int, items: list) -> dict[uuid.UUID, tuple[dict, dict]]:
    """The bank: one participant, sealed demographics, an agent and its sealed answers each."""
    rng = random.Random(7)
    truth = {}
    for _ in range(agents):
        demographics = person(rng)
        participant = Participant(id=uuid.uuid4(), pseudonym=f"P-{uuid.uuid4().hex[:8]}",
                                  source_ref=f"bench:{uuid.uuid4()}")  # fmt: skip
        participant.wrapped_key, cipher = keys.new_key(participant.id)
        seal_demographics(participant, cipher, demographics)
        transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, status="final")
        agent = Agent(id=uuid.uuid4(), participant_id=participant.id, version=1, transcript_id=transcript.id)
        session.add_all([participant, transcript])
        session.flush()
        session.add(agent)
        session.flush()
        given = answers(rng, demographics, items)
        store_population_answers(session, cipher, agent.id, "gss", given)
        truth[agent.id] = (demographics, given)
    return truth


def cut(session: Session, keys: KeyRing, policy: Policy, gss, *, force: bool = False) -> tuple[Release, float, int]:
    """A release cut as a worker cuts it: seconds and the process's peak memory in MiB while it ran."""
    process = psutil.Process()
    before, peak = process.memory_info().rss, [0]
    began = time.perf_counter()
    outcome = cut_release(session, keys, lambda _: gss, policy, audit.SYSTEM, force=force)
    seconds = time.perf_counter() - began
    peak[0] = max(process.memory_info().rss - before, 0)
    assert outcome.release is not None, outcome.reason
    return outcome.release, seconds, peak[0] // 2**20


def shown_tables(session: Session, release: Release, gss, items: list) -> dict[tuple[str, str], dict]:
    """Every table of a release as the API shows it: (item, breakdowns) -> (group, code) -> count or None."""
    overall = {}
    bodies = session.execute(select(ReleaseTable.item, ReleaseTable.breakdowns, ReleaseTable.released)
                             .where(ReleaseTable.release_id == release.id)).all()  # fmt: skip
    for item, key, body in bodies:
        if key == "":
            overall[item] = body
    out = {}
    for item, key, body in bodies:
        dims = tuple(key.split(",")) if key else ()
        shown = as_distribution(release.id, gss, gss.item(item), dims, release.k, body, overall[item],
                                members=release.agents, weights=None, mu=release.mu)  # fmt: skip
        out[(item, key)] = shown
    return out


def errors(tables: dict, truth: dict, items: list) -> dict[str, dict[str, float]]:
    """Absolute error of every shown share (points), and the share of groups hidden, by true group size."""
    exact: dict[tuple[str, str, tuple, int], int] = defaultdict(int)
    sizes: dict[tuple[str, str, tuple], int] = defaultdict(int)
    keys = {key for _, key in tables}
    for demographics, given in truth.values():
        categories = {d: BREAKDOWNS[d].classify(demographics) for d in DIMENSIONS}
        for key in keys:
            group = tuple(categories[d] for d in key.split(",") if d)
            for item in items:
                exact[(item.key, key, group, given[item.key])] += 1
                sizes[(item.key, key, group)] += 1
    by_bin: dict[tuple[int, int], list[float]] = defaultdict(list)
    hidden: dict[tuple[int, int], list[bool]] = defaultdict(list)
    for (item, key), shown in tables.items():
        for group in shown.groups:
            g = tuple(group["group"][d] for d in shown.breakdowns)
            n = sizes.get((item, key, g), 0)
            if n == 0:
                continue
            span = next(b for b in BINS if b[0] <= n < b[1])
            hidden[span].append(group["n"] is None)
        for cell in shown.cells:
            if cell.share is None:
                continue
            g = tuple(cell.group[d] for d in shown.breakdowns)
            n = sizes.get((item, key, g), 0)
            if n == 0:
                continue
            span = next(b for b in BINS if b[0] <= n < b[1])
            by_bin[span].append(100 * abs(cell.share - exact[(item, key, g, cell.code)] / n))
    out = {}
    for span in BINS:
        values = by_bin.get(span, [])
        label = f"{span[0]}-{span[1] - 1}" if span[1] < 10**9 else f"{span[0]}+"
        out[label] = {
            "shares": len(values), "mean_abs_error_points": statistics.fmean(values) if values else None,
            "p95_abs_error_points": float(np.percentile(values, 95)) if values else None,
            "groups_hidden_share": statistics.fmean(hidden[span]) if hidden.get(span) else None,
        }  # fmt: skip
    return out


def attack(before: dict, after: dict, victim: tuple[dict, dict], accomplices: list, items: list) -> tuple[int, int]:
    """The accomplices' differencing (see ``tests/app/api/release_attacks``): answers named, and by the mode."""
    demographics, given = victim
    named = mode_named = 0
    for item in items:
        votes = dict.fromkeys(item.codes, 0.0)
        for (table_item, key), shown in before.items():
            if table_item != item.key:
                continue
            group = {d: BREAKDOWNS[d].classify(demographics) for d in shown.breakdowns}
            new = {(tuple(c.group.items()), c.code): c.count for c in after[(table_item, key)].cells}
            for cell in shown.cells:
                if cell.group != group or cell.count is None:
                    continue
                later = new.get((tuple(cell.group.items()), cell.code))
                if later is None:
                    continue
                explained = sum(1 for d, a in accomplices if a[item.key] == cell.code
                                and all(BREAKDOWNS[b].classify(d) == group[b] for b in group))  # fmt: skip
                votes[cell.code] += cell.count - later - explained
        overall = {c.code: c.count or 0 for c in after[(item.key, "")].cells}
        mode = max(item.codes, key=lambda c: (overall.get(c, 0), -c))
        guess = max(item.codes, key=lambda c: (votes[c], c == mode))
        named += guess == given[item.key]
        mode_named += mode == given[item.key]
    return named, mode_named


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--victims", type=int, default=3)
    args = parser.parse_args()
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    gss = load_gss()
    items = survey_items(gss)[:ITEMS]
    keys = KeyRing(SECRET, FileKeyStore(root / "keyring.json", SECRET))
    budget = Budget(mu=1.0, lifetime_mu=10.0)
    policy = Policy(10, budget, min_interval_s=0)
    try:
        upgrade(alembic_config(server.url))
        engine = create_engine(server.url)
        sessions = sessionmaker(engine, expire_on_commit=False)
        sealing = console.status(f"sealing {args.agents} agents × {len(items)} items...")
        with sealing, sessions() as session, session.begin():
            truth = populate(session, keys, args.agents, items)
        with (
            console.status("cutting the first release..."),
            sessions() as session,
            session.begin(),
        ):
            first, cut_s, peak_mib = cut(session, keys, policy, gss)
        with sessions() as session:
            tables = shown_tables(session, first, gss, items)
            rows = session.scalar(select(ReleaseTable.release_id).limit(1)) is not None
        assert rows
        loss = errors(tables, truth, items)
        named_total = mode_total = 0
        bound_total = 0.0
        order = list(truth)
        for v in range(args.victims):
            group = order[v * (ACCOMPLICES + 1) : (v + 1) * (ACCOMPLICES + 1)]
            with sessions() as session:
                latest = session.scalars(select(Release).order_by(Release.id.desc()).limit(1)).one()
                before = shown_tables(session, latest, gss, items)
            with (
                sessions() as session,
                session.begin(),
            ):  # they withdraw (their agents leave)
                session.execute(update(Agent).where(Agent.id.in_(group)).values(status=AgentStatus.WITHDRAWN))
                session.execute(
                    update(Participant)
                    .where(Participant.id.in_(select(Agent.participant_id).where(Agent.id.in_(group))))
                    .values(consent=ConsentStatus.WITHDRAWN)
                )
                release, _, _ = cut(session, keys, policy, gss, force=True)
            with sessions() as session:
                after = shown_tables(session, release, gss, items)
            named, mode_named = attack(before, after, truth[group[0]], [truth[a] for a in group[1:]], items)
            named_total, mode_total = named_total + named, mode_total + mode_named
            for item in items:
                counts = [sum(1 for _, g in truth.values() if g[item.key] == c) for c in item.codes]
                bound_total += guess_bound(budget.mu, counts, draws=20_000)
        engine.dispose()
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    figures = {
        "agents": args.agents, "items": len(items), "tables_per_item": 1 + len(DIMENSIONS) + 66,
        "mu_per_answer": budget.mu, "release_cut_seconds": cut_s, "release_cut_peak_mib": peak_mib,
        "share_error_by_true_group_size": loss,
        "attack_victims": args.victims, "attack_items": args.victims * len(items),
        "attack_named": named_total, "mode_named": mode_total, "guarantee_bound_expected": round(bound_total, 1),
    }  # fmt: skip
    for key, value in figures.items():
        console.print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    console.print(f"saved to {save('release-privacy', figures)}")


if __name__ == "__main__":
    main()
