"""``agentbank validity``: how well the bank's agents are known to speak for their people."""

from __future__ import annotations

from datetime import UTC, datetime

from app.cli.common import cli, console, load_settings, open_bank


@cli.command()
def validity() -> None:
    """How well the bank's agents speak for their people: surveys, retests, report cards, the newest scoring.

    Participants with their survey and retest, agents with report cards, and the interview agents against
    every baseline in the newest `agentbank evaluate --dataset bank`, with their distortions and how far the
    bank's distributions lie from the people's own and the GSS's."""
    from app.cli.evaluate import conditions_table
    from app.cli.findings import print_findings
    from evaluation.standing import standing

    settings = load_settings()
    with open_bank(settings, models=False) as bank, bank.sessions() as session:
        found = standing(session, settings.data_dir / "evaluations", datetime.now(UTC))
    console.print(f"participants (consenting): {found.participants}")
    console.print(f"  survey taken (wave 1): {found.wave1}")
    console.print(f"  retest taken (wave 2): {found.wave2}; offered and not yet taken: {found.wave2_due}")
    console.print(f"active agents: {found.agents}, with a report card: {found.carded}")
    if found.run is None:
        console.print("no scoring of the bank's agents yet: run `agentbank evaluate --dataset bank` once "
                      "participants have taken their retest")  # fmt: skip
        return
    title = f"newest scoring: run {found.run.run_id}, model {found.run.model}, finished {found.run_date:%Y-%m-%d %H:%M}"
    console.print(conditions_table(found.conditions, title))
    print_findings(found.summary)
