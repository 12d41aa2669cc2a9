"""The bank scores its own agents: ``evaluate --dataset bank`` on scripted participants, with a model whose
accuracy is known (to show the pipeline recovers it) and with the embedded model (its honest figures).

Each scripted participant is a real person twice: the opening of a WPA life history (with a participant
code as its first line) is their interview, and a GSS 2006–10 panel respondent's own answers two years
apart are their survey and its retest (the battery's GSS items that respondent answered; the rest
declined; their demographics from the panel). Their agents are built with the scripted build model.

- ``--model capable``: a scripted model that reads the participant code from the interview in its prompt
  and gives that person's first-survey answer, except with probability ``--noise`` a uniformly random
  option. Its expected accuracy is known: mean over items of (1 − q) + q / k. The demographic condition
  shows no interview, so it gets the first option.
- ``--model blind``: a scripted model that gives everyone the first option (it never looks at the person).
- ``--model embedded``: the bank's embedded model answers (SmolLM2 via llama.cpp). Its interview tells
  it nothing about an unrelated panel respondent's answers, so its figures beside the baselines say
  how much a small model's priors carry, no more.

Every condition is scored, the interview + survey condition and the combination included, with the
distortions and the fidelity of aggregates (the bank's distributions beside the GSS's 2022 counts).

Run: python -m benchmarks.bench_bank_validity [--model capable|blind|embedded] [--people 30] [--items 20]
     [--noise 0.3] [--quick]   (quick: 6 people, 6 items, capable)
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from rich.console import Console

from agentbank.audit.log import SYSTEM
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import ParsedInterview, ParsedTurn, read_interviews
from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.embedded import stop_embedded_server
from agentbank.instruments.gss import load_gss
from agentbank.participants.battery import answers, battery_of
from agentbank.providers.factory import build_chat_model, build_embedder
from agentbank.providers.fakes import ScriptedChatModel, echo_minimal, minimal_answer
from app.cli.evaluate import conditions_table
from app.cli.findings import print_findings
from app.opening import open_bank
from benchmarks.bench_distortions import table_rows
from benchmarks.common import save
from evaluation.people.waves import load_dataset
from evaluation.runs.execute import Models
from evaluation.runs.records import RunConfig
from evaluation.service import run_evaluation

LIFE_HISTORIES = Path("../shared/data/transcripts/fwp_life_histories")
OPENING_WORDS = 500  # the interview shown whole within the answer prompt's budget
CODE = re.compile(r"participant code is (P\d+)")
ITEM_LINE = re.compile(r"^([A-Z][A-Z0-9_]*): ", re.MULTILINE)
SECRET = "bank-validity-benchmark-secret-0123456789"
console = Console()
CONDITIONS = ("interview", "interview-survey", "survey", "demographic", "population-mode", "cell-mode", "combined")


def panel_people(count: int, keys: list[str]) -> list[tuple[dict[str, int], dict[str, int], dict[str, int]]]:
    """(demographics, wave-1 answers, wave-2 answers) of the panel respondents who answered most of ``keys``
    in both waves."""
    gss = load_gss()
    data = load_dataset("gss-panel06", gss, items=keys)
    first, second = data.answers(1), data.answers(2)
    both = {p: [k for k in keys if k in first.get(p, {}) and k in second.get(p, {})] for p in first}
    chosen = sorted(both, key=lambda p: (-len(both[p]), p))[:count]
    return [(data.demographics.get(p, {}), {k: first[p][k] for k in both[p]}, {k: second[p][k] for k in both[p]})
            for p in chosen]  # fmt: skip


def opening(interview: ParsedInterview, code: str) -> ParsedInterview:
    """The interview's first words, told by a participant who first gives their code."""
    kept, words = [ParsedTurn("participant", f"My participant code is {code}.")], 0
    for turn in interview.turns:
        if words > OPENING_WORDS:
            break
        kept.append(turn)
        words += len(turn.text.split())
    return ParsedInterview(f"bench:{code}", tuple(kept), {})


def capable(truth: dict[str, dict[str, int]], noise: float, seed: int = 0) -> ScriptedChatModel:
    """A model that knows each person's first-survey answers, wrong (uniformly random) with chance ``noise``."""
    draw = random.Random(seed)
    gss = load_gss()

    def respond(messages: Any, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return echo_minimal(messages, schema)
        found = CODE.search(" ".join(str(m.get("content", "")) for m in messages))
        if found is None or "properties" not in schema:
            return minimal_answer(schema)
        person = truth.get(found.group(1), {})

        def answer(key: str) -> int:
            known = person.get(key)
            return known if known is not None and draw.random() >= noise else draw.choice(gss.item(key).codes)

        if "answer" in schema["properties"]:  # one item in the call: named in the prompt as "KEY: question"
            (key,) = ITEM_LINE.findall(str(messages[-1].get("content", "")))[:1]
            return {"answer": answer(key.lower())}
        return {key: answer(key) for key in schema["properties"]}

    return ScriptedChatModel(respond)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("capable", "blind", "embedded"), default="capable")
    parser.add_argument("--people", type=int, default=30)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--quick", action="store_true", help="6 people, 6 items, capable")
    args = parser.parse_args()
    if args.quick:
        args.people, args.items, args.model = 6, 6, "capable"
    data_dir = Path(tempfile.mkdtemp(prefix="agentbank-validity-"))
    settings = Settings(data_dir=data_dir, secret_key=SecretStr(SECRET), chat_provider="embedded",
                        embedder_provider="local", reference_data_dir=Path("../shared/data"))  # fmt: skip
    battery = battery_of(settings)
    gss_keys = [e.item.key for page in battery.pages if page.section == "gss" for e in page.items]
    people = panel_people(args.people, gss_keys)
    histories, _ = read_interviews(LIFE_HISTORIES, limit=args.people, skip_invalid=True)
    codes = [f"P{n:03d}" for n in range(len(people))]
    embedder = build_embedder(settings)
    builder = ScriptedChatModel(echo_minimal)
    chat = capable(dict(zip(codes, (w1 for _, w1, _ in people), strict=True)), args.noise) \
        if args.model == "capable" else build_chat_model(settings)  # fmt: skip
    if args.model == "blind":
        chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema), name="blind")
    try:
        with open_bank(settings, models=False) as bank:
            began = time.perf_counter()
            start = datetime.now(UTC) - timedelta(days=30)
            with transaction(bank.sessions) as session:
                for code, (demographics, first, second), history in zip(codes, people, histories, strict=False):
                    participant = store_interview(session, opening(history, code), bank.keys)
                    build_agent(session, participant, chat=builder, embedder=embedder, keys=bank.keys,
                                config=BuildConfig.of(builder, embedder, 0))  # fmt: skip
                    _survey(session, bank.keys, participant.id, battery, demographics, first, second, start)
            setup = time.perf_counter() - began
            config = RunConfig(dataset="bank", conditions=CONDITIONS, sample=0, n_items=args.items, items_per_call=5,
                               reasons=False, traits=False)  # fmt: skip
            models = Models(chat, embedder, bank.keys, settings.memory_token_budget, bank.keys)
            began = time.perf_counter()
            outcome = run_evaluation(config, settings, data_dir / "evaluations", models, bank.sessions)
            scoring = time.perf_counter() - began
    finally:
        chat.close()
        embedder.close()
        stop_embedded_server(settings.postgres_dir)
    summary = outcome.summary
    expected = _expected(people, outcome.record.items, args.noise) if args.model == "capable" else None
    _print(summary, args, expected, setup, scoring)
    figures = {"model": args.model, "chat_model": outcome.record.model, "people": len(outcome.record.people),
               "items": outcome.record.items, "noise": args.noise if args.model == "capable" else None,
               "expected_interview_accuracy": expected, "setup_s": round(setup, 1), "scoring_s": round(scoring, 1),
               "conditions": summary["conditions"], "table": table_rows(summary),
               "combination": summary.get("combination"), "fidelity_against_gss": {
                   name: f and {"tvd": f["tvd"], "jsd": f["jsd"], "items": f["items"]}
                   for name, f in summary["fidelity"].get("against_reference", {}).items()},
               "sentences": summary["sentences"]}  # fmt: skip
    if not args.quick:
        console.print(f"saved to {save(f'bank-validity-{args.model}', figures)}")
    shutil.rmtree(data_dir, ignore_errors=True)


def _survey(session: Any, keys: Any, participant_id: Any, battery: Any, demographics: dict[str, int],
            first: dict[str, int], second: dict[str, int], start: datetime) -> None:  # fmt: skip
    """Both waves of the participant's survey: the panel respondent's answers, the rest declined."""
    about = {"about:age": demographics.get("age"), "about:hispanic": demographics.get("hispanic")}
    for wave, when, given in ((1, start, first), (2, start + timedelta(days=15), second)):
        for key in battery.keys(wave):
            instrument, item = key.split(":")
            value = about.get(key) if instrument == "about" else None
            if instrument == "gss":
                value = given.get(item, demographics.get(item) if wave == 1 else None)
                if value is not None and value not in battery.item(key).item.codes:
                    value = None
            if key == "about:age" and value is not None and not 18 <= value <= 99:
                value = None
            answers.save_answer(session, keys, participant_id, battery, wave, key, value, when, actor=SYSTEM)
        answers.complete(session, keys, participant_id, battery, wave, when, timedelta(days=14), actor=SYSTEM)


def _expected(people: list[Any], items: list[str], noise: float) -> float:
    """The capable model's expected accuracy on the scored items: (1 − q) + q / k, averaged over people."""
    gss = load_gss()
    per_person = []
    for _, first, second in people:
        scored = [k for k in items if k in first and k in second]
        if scored:
            per_person.append(sum((1 - noise) + noise / len(gss.item(k).codes) for k in scored) / len(scored))
    return round(sum(per_person) / len(per_person), 4)


def _print(summary: dict[str, Any], args: Any, expected: float | None, setup: float, scoring: float) -> None:
    title = f"the bank's agents against their own people ({args.model} model)"
    console.print(conditions_table(summary["conditions"], title))
    print_findings(summary)
    if expected is not None:
        got = summary["conditions"]["interview"]["accuracy"]
        console.print(f"interview accuracy {got:.3f}; expected from the noise {args.noise}: {expected:.3f}")
    console.print(f"setup (store, build, surveys) {setup:.0f} s; scoring {scoring:.0f} s")


if __name__ == "__main__":
    main()
