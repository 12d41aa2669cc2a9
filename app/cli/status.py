"""Commands that show where the bank stands: builds and agents (``status``), and the agents by name
(``agents``), so that ``ask AGENT`` has a pseudonym to take."""

from __future__ import annotations

import typer

from app.cli.common import cli, console, load_settings, open_bank


@cli.command()
def status() -> None:
    """Builds queued, running and failed (with the reason), and agents by status."""
    from agentbank import __version__
    from agentbank.building.progress import agents_by_status, build_counts, failed_builds

    settings = load_settings()
    with open_bank(settings, models=False) as bank, bank.sessions() as session:
        builds = build_counts(session)
        failed = failed_builds(session)
        agents = agents_by_status(session)
    console.print(f"agentbank {__version__}, chat model: {settings.chat_provider}")
    console.print(
        f"builds: {builds.queued} queued, {builds.running} running, {builds.failed} failed, {builds.succeeded} done"
    )
    if builds.queued or builds.running:
        console.print("  [dim]a worker builds them (`agentbank serve` runs one; or `agentbank worker`)[/]")
    for build in failed:
        console.print(f"  [red]failed[/] {build.pseudonym} after {build.attempts} attempt(s): {build.reason}")
        if build.hint:
            console.print(f"    [yellow]→ {build.hint}[/]")
    described = ", ".join(f"{n} {state}" for state, n in sorted(agents.items())) or "none yet"
    console.print(f"agents: {described}")


@cli.command("agents")
def agents_command() -> None:
    """Every active agent: its pseudonym (what `ask` and `survey --agents` take), version, and report card."""
    from rich.table import Table

    from agentbank.building.agents import active_agents
    from agentbank.building.progress import build_counts
    from agentbank.building.validity.cards import latest_cards

    with open_bank(load_settings(), models=False) as bank, bank.sessions() as session:
        rows = active_agents(session)
        cards = latest_cards(session, bank.keys, [agent.id for agent, _ in rows])
        if not rows:
            builds = build_counts(session)
            console.print(f"no active agents; {pending_builds_phrase(builds.queued, builds.running)}")
            raise typer.Exit(0)
        table = Table("pseudonym", "version", "status", "built", "report card")
        for agent, participant in rows:
            card = "; ".join(
                f"{c.instrument} ({c.condition}): accuracy {c.accuracy:.2f}"
                + (f", normalized {c.normalized_accuracy:.2f}" if c.normalized_accuracy is not None else "")
                for c in cards.get(agent.id, [])
            )
            table.add_row(
                participant.pseudonym, str(agent.version), agent.status, f"{agent.created_at:%Y-%m-%d %H:%M}",
                card or "not validated",
            )  # fmt: skip
    console.print(table)


def pending_builds_phrase(queued: int, running: int) -> str:
    """What the queue holds, for commands that find no agent yet."""
    if queued or running:
        return f"{queued} builds queued, {running} running: see `agentbank status`"
    return "run `agentbank ingest` and `agentbank build` first"
