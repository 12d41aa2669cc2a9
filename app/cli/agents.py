"""Agent commands: ingest interviews, build agents, ask them questions, survey them, and the demo."""

from __future__ import annotations

import csv
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from app.cli.builds import BuildsShown, Built, progress_bar
from app.cli.common import cli, console, load_settings, open_bank
from app.cli.status import pending_builds_phrase

if TYPE_CHECKING:  # the bank's agents and their answering are imported when a command runs
    from agentbank.consultation.answering import AgentAnswer, Condition
    from agentbank.consultation.door import Grant
    from agentbank.db.models import Agent, Participant
    from agentbank.instruments import Instrument, Item
    from agentbank.runtime.bank import Bank

# agentbank.building.ingest.FORMATS and the first four of agentbank.consultation.answering.CONDITIONS, as
# --help shows them without importing the bank (tests/app/cli/test_lazy.py checks that they are the same).
FORMATS = ("auto", "turns", "text", "fwp")
CONDITIONS = ("interview", "ablated", "demographic", "persona")


@cli.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="A transcript file, or a folder of them.")],
    fmt: Annotated[str, typer.Option("--format", help=f"One of {', '.join(FORMATS)}.")] = "auto",
    limit: Annotated[int | None, typer.Option(help="Ingest at most this many interviews.")] = None,
    skip_invalid: Annotated[bool, typer.Option(help="Skip malformed records instead of stopping.")] = False,
) -> None:
    """Store interviews as participants with encrypted, final transcripts (all or nothing)."""
    from agentbank.building.ingest import read_interviews
    from agentbank.building.transcripts import store_interviews
    from agentbank.db import transaction

    interviews, skipped = read_interviews(path, fmt, limit, skip_invalid)
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        result = store_interviews(session, interviews, bank.keys)
    words = sum(i.participant_words for i in interviews)
    console.print(
        f"stored {len(result.participants)} interview(s) ({words:,} participant words); "
        f"{len(result.already_present)} already present; {len(skipped)} skipped as invalid"
    )
    for problem in skipped[:10]:
        console.print(f"  [yellow]skipped[/] {problem.message}")


def _build_pending(bank: Bank, on_built: Built | None = None) -> tuple[int, int]:
    """Build every pending agent (``building.runs.build_pending``) under a progress bar; (built, failed)."""
    from agentbank.building.runs import Builder, build_pending

    chat, embedder = bank.require_models()
    builder = Builder(bank.sessions, chat, embedder, bank.keys, bank.settings.reflection_word_budget, bank.in_flight)
    with progress_bar() as progress:
        shown = BuildsShown(progress, bank, on_built)
        counts = build_pending(builder, shown)
        shown.finished()
    return counts


@cli.command()
def build() -> None:
    """Build agents (reflections and embeddings) for every participant without a current one; resumable."""
    with open_bank(load_settings()) as bank:
        built, failures = _build_pending(bank)
    console.print(f"built {built} agent(s)" if built or failures else "every agent is up to date")
    if failures:
        raise typer.Exit(1)


DEMO_PURPOSE = "the demo: showing how agents answer survey items"
PurposeOption = Annotated[
    str, typer.Option(help="Why you ask: the participant reads it in the portal's list of uses of their agent.")
]


def _condition(name: str, fraction: float | None, seed: int) -> Condition:
    from agentbank.consultation.answering import Condition

    return Condition(name, fraction=fraction, seed=seed)


@cli.command()
def ask(
    agent: Annotated[str, typer.Argument(help="The participant's pseudonym (P-...) or the agent id.")],
    question: Annotated[str, typer.Argument(help="An open-ended question.")],
    condition: Annotated[str, typer.Option(help="interview or ablated.")] = "interview",
    fraction: Annotated[float | None, typer.Option(help="Share of turns removed (ablated).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the turns removed (ablated) and of the model's sampling.")] = 0,
    purpose: PurposeOption = "checking the agent's answers from the command line",
) -> None:
    """Ask one agent an open-ended question; the answer cites the interview turns it draws on."""
    from agentbank.building.agents import find_agent
    from agentbank.consultation.door import Grant

    with open_bank(load_settings()) as bank:
        with bank.sessions() as session:
            found, participant = find_agent(session, agent)
        with console.status(f"{participant.pseudonym} is answering (minutes on a small machine)..."):
            (answer,) = bank.door.ask(
                bank.sessions,
                Grant.operator(purpose),
                found.id,
                [question],
                _condition(condition, fraction, seed),
                seed=seed,
            ).answers
    console.print(answer.value)
    turns = ", ".join(str(t) for t in answer.cited_turns)
    meta = answer.provenance
    cached = " · cached" if answer.cached else ""
    console.print(
        f"[dim]cites turns {turns} · {meta['model']} · {meta['prompt_version']} "
        f"· agent v{meta['agent_version']}{cached}[/]"
    )


def _render(item: Item, answer: AgentAnswer) -> str:
    if item.options:
        return f"{answer.value} {item.label(int(answer.value))}"
    return str(answer.value)


def _survey(
    bank: Bank,
    instrument: Instrument,
    items: Sequence[Item],
    agents: Sequence[tuple[Agent, Participant]],
    condition: Condition,
    items_per_call: int,
    grant: Grant,
    options: dict[str, Any] | None = None,
) -> list[tuple[Participant, Agent, list[AgentAnswer]]]:
    rows = []
    with progress_bar() as progress:
        task = progress.add_task("surveying agents", total=len(agents))
        for agent, participant in agents:
            answers = bank.door.survey(
                bank.sessions,
                grant,
                agent.id,
                instrument,
                items,
                condition,
                items_per_call=items_per_call,
                **(options or {}),
            ).answers
            rows.append((participant, agent, answers))
            progress.advance(task)
    return rows


# A run file holds agents' answers in the clear, under pseudonyms: the bank cannot seal it per participant
# and a withdrawal cannot reach it, so it is written only where the operator names, and they are told.
RUN_FILE_WARNING = (
    "[yellow]{out} holds these agents' answers under their pseudonyms, outside the bank: a participant's "
    "withdrawal cannot reach it. Keep it no longer than you need it.[/]"
)


def _print_and_write(
    instrument: Instrument,
    items: Sequence[Item],
    rows: Sequence[tuple[Participant, Agent, list[AgentAnswer]]],
    out: Path | None,
) -> None:
    table = Table("agent", *[item.key.upper() for item in items], title=f"{instrument.title}: answers in GSS codes")
    for participant, _agent, answers in rows:
        table.add_row(participant.pseudonym, *[_render(i, a) for i, a in zip(items, answers, strict=True)])
    console.print(table)
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["agent", "agent_id", "agent_version", *[item.key.upper() for item in items]])
        for participant, agent, answers in rows:
            writer.writerow([participant.pseudonym, agent.id, agent.version, *[a.value for a in answers]])
    console.print(f"wrote {out}")
    console.print(RUN_FILE_WARNING.format(out=out))


CsvOption = Annotated[
    Path | None,
    typer.Option(
        "--csv",
        help="Also write the answers to this CSV (nothing is written otherwise: a withdrawal cannot reach the file).",
    ),
]


@cli.command()
def survey(
    instrument: Annotated[str, typer.Option(help="gss, bfi44, ipip50 or games.")] = "gss",
    items: Annotated[str | None, typer.Option(help="Comma-separated item keys (GSS mnemonics); default all.")] = None,
    agents: Annotated[str, typer.Option(help="Comma-separated pseudonyms or agent ids, or 'all'.")] = "all",
    condition: Annotated[str, typer.Option(help=f"One of {', '.join(CONDITIONS)}.")] = "interview",
    fraction: Annotated[float | None, typer.Option(help="Share of turns removed (ablated).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the turns removed (ablated).")] = 0,
    items_per_call: Annotated[int, typer.Option(min=1, max=20, help="Items answered in one model call.")] = 1,
    csv_path: CsvOption = None,
    purpose: PurposeOption = "surveying agents from the command line",
) -> None:
    """Survey agents on an instrument; print a table and, with --csv, write it in the instrument's codes."""
    from agentbank.building.agents import active_agents, find_agent
    from agentbank.building.progress import build_counts
    from agentbank.consultation.door import Grant
    from agentbank.instruments import load_instrument, select_items
    from agentbank.instruments.gss import survey_items

    settings = load_settings()
    chosen_instrument = load_instrument(instrument, settings.reference_data_dir)
    if items:
        chosen = select_items(chosen_instrument, [k for k in items.split(",") if k.strip()])
    elif chosen_instrument.key == "gss":
        chosen = survey_items(chosen_instrument)
    else:
        chosen = list(chosen_instrument.items)
    with open_bank(settings, models=False) as bank, bank.sessions() as session:
        if agents == "all":
            targets = active_agents(session)
        else:
            targets = [find_agent(session, ref.strip()) for ref in agents.split(",") if ref.strip()]
        if not targets:
            builds = build_counts(session)
            console.print(f"no active agents yet: {pending_builds_phrase(builds.queued, builds.running)}")
            raise typer.Exit(1)
    with open_bank(settings) as bank:
        condition_ = _condition(condition, fraction, seed)
        rows = _survey(bank, chosen_instrument, chosen, targets, condition_, items_per_call, Grant.operator(purpose))
    _print_and_write(chosen_instrument, chosen, rows, csv_path)


@cli.command()
def demo(
    life_histories: Annotated[
        int,
        typer.Option(min=0, help="WPA life histories from the optional reference data, beside the fictional people."),
    ] = 0,
    csv_path: CsvOption = None,
) -> None:
    """Build a small bank (the demo's fictional people) and survey it on five GSS items."""
    from agentbank.building.agents import active_agents
    from agentbank.building.transcripts import store_interviews
    from agentbank.consultation.answering import Condition
    from agentbank.consultation.door import Grant
    from agentbank.db import transaction
    from agentbank.instruments import load_instrument, select_items
    from agentbank.runtime.demo import DEMO_ITEMS, demo_interviews
    from agentbank.runtime.demo_settings import DEMO_SETTINGS, is_demo_bank
    from migrations.runner import migrate_database

    began = time.perf_counter()
    settings = load_settings()
    interviews = demo_interviews(settings.reference_data_dir, life_histories)
    with console.status("preparing the database..."):
        migrate_database(settings)
    gss = load_instrument("gss", settings.reference_data_dir)
    items = select_items(gss, list(DEMO_ITEMS))
    with console.status("loading the models..."), open_bank(settings) as bank:
        with transaction(bank.sessions) as session:
            result = store_interviews(session, interviews, bank.keys)
            fictional = is_demo_bank(session)
        console.print(
            f"ingested {len(result.participants)} interview(s); {len(result.already_present)} already present"
        )
        # A bank of the demo's fictional people only samples its answers, so they vary from agent to agent.
        options = DEMO_SETTINGS.answer_options() if fictional else {}
        if fictional:
            console.print(
                "[dim]the demo's people are fictional (written for the demo; nobody was interviewed); their answers "
                f"are sampled at temperature {DEMO_SETTINGS.temperature:g} (a demo setting), so they vary by chance[/]"
            )

        def survey_now(agent_id: uuid.UUID, participant: Participant) -> None:
            grant = Grant.operator(DEMO_PURPOSE)
            answers = bank.door.survey(bank.sessions, grant, agent_id, gss, items, **options).answers
            line = ", ".join(f"{i.key.upper()}={_render(i, a)}" for i, a in zip(items, answers, strict=True))
            console.print(f"[green]{participant.pseudonym}[/] {line}")

        _build_pending(bank, on_built=survey_now)
        with bank.sessions() as session:
            targets = active_agents(session)
        rows = _survey(bank, gss, items, targets, Condition(), 1, Grant.operator(DEMO_PURPOSE), options)
    _print_and_write(gss, items, rows, csv_path)
    console.print(f"demo finished in {time.perf_counter() - began:.0f} s")
    if settings.chat_provider == "embedded":
        console.print(
            "[dim]The embedded 135M model proves the plumbing; its answers do not depend on the person. For a "
            "capable model set AGENTBANK_CHAT_PROVIDER=openai, AGENTBANK_CHAT_BASE_URL and AGENTBANK_CHAT_MODEL.[/]"
        )
