"""The open tier's protection on 1,000 agents × 173 GSS items: what a release costs to cut, what its noise
costs a researcher, and what it leaves an attacker with accomplices.

1. A bank of 1,000 agents with demographics drawn from the GSS margins the weights use, and answers to
   173 items that depend on party, age and education (so tables have something to show), every answer
   and demographic sealed with its participant's own key, as the bank stores them.
2. The cut: seconds and the process's peak memory, for the release's workload (the overall and standing
   one-way tables of every item with their weighted totals, and four pairs researchers asked for).
3. The researcher's loss, before and after in one run (``release_workloads``): the same members, answers
   and weights protected in memory the earlier way (every table of every item) and the bank's way; every
   shown share against the exact share of the same group, in points, by kind of table (standing one-way,
   one-way and two-way asked for, weighted) and the group's true size: the share of groups shown, and the
   mean and 95th percentile of the absolute error.
4. The attacker: a victim and nine accomplices withdraw together, a release is cut, and the attacker
   subtracts every table of the two releases, less what the accomplices contributed (the attack of
   ``tests/app/api/release_attacks``): the victim's answers named, beside the item's mode and the bound.

Run: python -m benchmarks.bench_release_privacy [--quick] [--agents N] [--victims V]
(quick: 1,000 agents × 40 items, one victim; the last line reads
`one-way groups of 100-249: shown X%, mean error Y points`)
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import psutil
from rich.console import Console
from sqlalchemy import create_engine, select, update
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.building.transcripts import seal_demographics
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Agent, Participant, Release, ReleaseTable, Transcript
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.distributions import DIMENSIONS, as_distribution
from agentbank.publication.members import load_members
from agentbank.publication.population import store_population_answers
from agentbank.publication.privacy import SHARES, Budget, OpenDPNoise, Scales, guess_bound
from agentbank.publication.releases import Policy, cut_release
from agentbank.publication.weighting.releases import release_weights
from agentbank.publication.weighting.targets import default_targets
from agentbank.publication.workload import STANDING, ask
from benchmarks import release_workloads
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

SECRET = "benchmark-secret-" * 3
ITEMS = 173
ACCOMPLICES = 9
# The pairs researchers asked for before the first cut (as many as a release measures of an item).
ASKED = (("sex", "race"), ("sex", "age_band"), ("race", "party"), ("education", "party"))
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


def researchers_loss(session: Session, keys: KeyRing, gss, budget: Budget, reserve: float) -> dict[str, dict]:
    """What the earlier workload and the bank's show of the same members, answers and weights, by kind."""
    members = load_members(session, keys, DIMENSIONS)
    scales = Scales.of(budget, len(STANDING), reserve)
    weights = release_weights(members.profiles, DIMENSIONS, default_targets(), OpenDPNoise(), scales.margins,
                              budget.weight_cap)  # fmt: skip
    ways = {
        "earlier": release_workloads.earlier(budget),
        "bank": release_workloads.bank(budget, STANDING, list(ASKED), reserve),
    }
    compared = set(ways["bank"].tables)  # the same tables both ways (the earlier way measured more)
    return {name: release_workloads.loss(members, gss, way, weights, 10, STANDING, compared)
            for name, way in ways.items()}  # fmt: skip


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
    parser.add_argument("--quick", action="store_true", help="1,000 agents x 40 items, one victim")
    parser.add_argument("--reserve", type=float, default=SHARES["asked"], help="the share of mu² kept for asked tables")
    args = parser.parse_args()
    if args.quick:
        args.victims = 1
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    gss = load_gss()
    items = survey_items(gss)[: 40 if args.quick else ITEMS]
    keys = KeyRing(SECRET, FileKeyStore(root / "keyring.json", SECRET))
    budget = Budget(mu=1.0, lifetime_mu=10.0)
    policy = Policy(10, budget, min_interval_s=0, reserve=args.reserve)
    try:
        upgrade(alembic_config(server.url))
        engine = create_engine(server.url)
        sessions = sessionmaker(engine, expire_on_commit=False)
        sealing = console.status(f"sealing {args.agents} agents × {len(items)} items...")
        with sealing, sessions() as session, session.begin():
            truth = populate(session, keys, args.agents, items)
            for item in items:  # what researchers asked for before the first cut
                for pair in ASKED:
                    ask(session, "gss", item.key, pair)
        with console.status("the researcher's loss, the earlier way and the bank's..."), sessions() as session:
            by_kind = researchers_loss(session, keys, gss, budget, args.reserve)
        with (
            console.status("cutting the first release..."),
            sessions() as session,
            session.begin(),
        ):
            _, cut_s, peak_mib = cut(session, keys, policy, gss)
        with sessions() as session:
            assert session.scalar(select(ReleaseTable.release_id).limit(1)) is not None
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
        "agents": args.agents, "items": len(items), "tables_per_item": 1 + len(STANDING) + len(ASKED),
        "earlier_tables_per_item": 1 + len(DIMENSIONS) + 66, "standing": list(STANDING),
        "asked": [",".join(p) for p in ASKED], "reserve_share": args.reserve, "mu_per_answer": budget.mu,
        "release_cut_seconds": cut_s,
        "release_cut_peak_mib": peak_mib, "loss_by_kind": by_kind,
        "attack_victims": args.victims, "attack_items": args.victims * len(items),
        "attack_named": named_total, "mode_named": mode_total, "guarantee_bound_expected": round(bound_total, 1),
    }  # fmt: skip
    for key, value in figures.items():
        if key != "loss_by_kind":
            console.print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    for way, kinds in by_kind.items():
        for name, spans in kinds.items():
            for span, f in spans.items():
                if f["groups"] or f["shares"]:
                    shown = f"{100 * f['shown_share']:.0f}%" if f["shown_share"] is not None else "-"
                    error = (f"{f['mean_abs_error_points']:.1f} (p95 {f['p95_abs_error_points']:.1f})"
                             if f["mean_abs_error_points"] is not None else "-")  # fmt: skip
                    console.print(f"{way:8} {name:14} {span:>8}: shown {shown:>5}, mean error {error} points")
    name = "release-privacy-quick" if args.quick else f"release-privacy-{args.agents}"
    if args.reserve != SHARES["asked"]:
        name += f"-reserve-{args.reserve:g}"
    console.print(f"saved to {save(name, figures)}")
    last = by_kind["bank"]["one-way"].get("100-249")
    if last is None or not last["groups"]:  # a larger bank has no one-way group that small
        console.print("one-way groups of 100-249: none at this size")
    else:
        console.print(f"one-way groups of 100-249: shown {100 * last['shown_share']:.0f}%, "
                      f"mean error {last['mean_abs_error_points']:.1f} points")  # fmt: skip


if __name__ == "__main__":
    main()
