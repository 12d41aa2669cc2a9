"""Every condition of the evaluation on the GSS panels, with the distortions and the fidelity of aggregates:
accuracy, normalized accuracy, correlation, spread, stereotyping and total variation from the people's own
distribution, per condition beside the baselines and the combination, for three models:

- ``blind``: a scripted model that gives everyone the first option (it never looks at the person);
- ``knows``: a scripted model that knows each respondent's first-survey answers (it finds the person by the
  agent's private marker in its prompt) and answers one uniformly drawn option instead with chance ``--noise``;
- ``embedded``: the bank's embedded model (SmolLM2 via llama.cpp): about an hour for 100 people × 30 items on
  two cores, so run it on purpose.

Run: python -m benchmarks.bench_distortions [--datasets gss-panel06,gss-panel08] [--models blind,knows]
     [--sample 100] [--items 30] [--noise 0.3]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from agentbank.consultation.answering.engine import CANARY_LINE
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker
from agentbank.db.embedded import stop_embedded_server
from agentbank.db.models import Agent, Participant
from agentbank.instruments.gss import load_gss
from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import ChatModel
from agentbank.providers.factory import build_chat_model, build_embedder
from agentbank.providers.fakes import ScriptedChatModel, echo_minimal, minimal_answer
from agentbank.runtime.bank import open_keyring
from benchmarks.common import save
from evaluation.people.respondents import evaluation_engine
from evaluation.people.waves import load_dataset
from evaluation.runs.execute import Models
from evaluation.runs.records import RunConfig
from evaluation.service import run_evaluation
from migrations.runner import SCHEMA

CONDITIONS = ("survey", "interview-survey", "demographic", "population-mode", "cell-mode", "combined")
MARKER = re.compile(re.escape(CANARY_LINE) + r"([a-z2-7]{24})")
ITEM_LINE = re.compile(r"^([A-Z][A-Z0-9_]*): ", re.MULTILINE)
SECRET = "distortions-benchmark-secret-0123456789"
console = Console()


def knowing(settings: Settings, keys: KeyRing, digest: str, truth: dict[str, dict[str, int]], noise: float) -> Any:
    """A scripted model that answers as the respondent whose agent's marker is in its prompt did in wave 1,
    wrong (a uniformly drawn option) with chance ``noise``."""
    gss, draw, people = load_gss(), random.Random(0), {}
    sessions = make_sessionmaker(evaluation_engine(settings, SCHEMA))
    prefix = f"dataset:{digest}:"

    def person_of(marker: str) -> dict[str, int]:
        if marker not in people:  # a new respondent's agent: learn every marker of this dataset's agents
            with sessions() as session:
                rows = session.execute(
                    select(Agent.id, Participant.source_ref)
                    .join(Participant, Participant.id == Agent.participant_id)
                    .where(Participant.source_ref.startswith(prefix))
                )
                people.update({keys.canary(a): ref[len(prefix):] for a, ref in rows})  # fmt: skip
        return truth.get(people.get(marker, ""), {})

    def respond(messages: Any, schema: dict[str, Any] | None) -> Any:
        found = MARKER.search(str(messages[0].get("content", "")))
        if schema is None or found is None or "properties" not in schema:
            return echo_minimal(messages, schema) if schema is None else minimal_answer(schema)
        person = person_of(found.group(1))

        def answer(key: str) -> int:
            known = person.get(key)
            return known if known is not None and draw.random() >= noise else draw.choice(gss.item(key).codes)

        if "answer" in schema["properties"]:
            (key,) = ITEM_LINE.findall(str(messages[-1].get("content", "")))[:1]
            return {"answer": answer(key.lower())}
        return {key: answer(key) for key in schema["properties"]}

    return ScriptedChatModel(respond, name=f"knows-{noise}")


def one(dataset: str, model: str, args: Any) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="agentbank-distortions-"))
    settings = Settings(data_dir=data_dir, secret_key=SecretStr(SECRET), chat_provider="embedded",
                        embedder_provider="local", reference_data_dir=Path("../shared/data"))  # fmt: skip
    config = RunConfig(dataset=dataset, conditions=CONDITIONS, sample=args.sample, n_items=args.items,
                       items_per_call=5, reasons=False, survey_context="other-topics")  # fmt: skip
    embedder = build_embedder(settings)
    keys = open_keyring(settings, settings.evaluation_database)
    chat: ChatModel
    if model == "blind":
        chat = ScriptedChatModel(lambda messages, schema: minimal_answer(schema), name="blind")
    elif model == "knows":
        data = load_dataset(dataset, load_gss())
        chat = knowing(settings, keys, data.digest, data.answers(1), args.noise)
    else:
        chat = build_chat_model(settings)
    began = time.perf_counter()
    try:
        models = Models(chat, embedder, open_keyring(settings), settings.memory_token_budget, keys)
        outcome = run_evaluation(config, settings, data_dir / "evaluations", models, schema=SCHEMA)
    finally:
        chat.close()
        embedder.close()
        stop_embedded_server(settings.postgres_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    summary = outcome.summary
    return {"dataset": dataset, "model": model, "chat_model": outcome.record.model, "seconds": round(
        time.perf_counter() - began, 1), "people": len(outcome.record.people), "items": outcome.record.items,
        "rows": table_rows(summary), "combination": summary.get("combination"), "sentences": summary["sentences"],
        "warnings": summary["warnings"]}  # fmt: skip


def table_rows(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per condition (and the people's retest): the figures of the benchmark's table."""
    out = {}
    for name, d in summary["distortions"].items():
        c = summary["conditions"].get(name, {})
        f = (summary["fidelity"]["against_people"].get(name) or {}).get("tvd")
        out[name] = {"accuracy": c.get("accuracy"), "normalized": c.get("normalized_accuracy"),
                     "normalized_ci": c.get("normalized_accuracy_ci"), "correlation": _v(d.get("correlation")),
                     "spread": _v(d.get("spread")), "stereotyping": _v(d.get("stereotyping")),
                     "ideology": _v(d.get("ideology")), "tvd": _v(f)}  # fmt: skip
    return out


def _v(figure: dict[str, Any] | None) -> float | None:
    return None if not figure else round(float(figure["value"]), 4)


def _show(run: dict[str, Any]) -> None:
    table = Table(title=f"{run['dataset']}, {run['model']} model ({run['people']} people × {len(run['items'])} items)")
    for header in ("condition", "accuracy", "normalized", "correlation", "spread", "stereotyping", "TVD"):
        table.add_column(header, justify="right")
    for name, r in run["rows"].items():
        cells = [r[k] for k in ("accuracy", "normalized", "correlation", "spread", "stereotyping", "tvd")]
        table.add_row(name, *("—" if v is None else f"{v:.3f}" for v in cells))
    console.print(table)
    for warning in run["warnings"]:
        console.print(f"warning: {warning}")
    if run["sentences"]:
        console.print(run["sentences"][0])
    console.print(f"{run['seconds']:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="gss-panel06,gss-panel08")
    parser.add_argument("--models", default="blind,knows")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--noise", type=float, default=0.3)
    args = parser.parse_args()
    runs = []
    for dataset in args.datasets.split(","):
        for model in args.models.split(","):
            runs.append(one(dataset, model, args))
            _show(runs[-1])
    path = save(f"distortions-{'-'.join(args.models.split(','))}", {"noise": args.noise, "runs": runs})
    console.print(f"saved to {path}")


if __name__ == "__main__":
    main()
