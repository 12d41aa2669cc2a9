"""``agentbank study``: a coordinator's commands: create a study, invite a cohort (codes and links as CSV),
see where everyone stands, export it, revoke unused invitations, remind those due for the retest, list each
participant's own completion codes, and record the panel's returned and timed-out submissions.

What is printed or written is stages, times and counts by invitation number: never a word of an
interview, an answer or a contact.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from app.cli import server_url
from app.cli.common import cli, console, load_settings, open_bank
from app.cli.common import operator as coordinator


class Panel(StrEnum):
    """``agentbank.studies.setup.Panel``'s choices, for --help without the studies' models (tests/app/
    test_cli_lazy.py checks that they are the same)."""

    NONE = "none"
    PROLIFIC = "prolific"
    CLOUDRESEARCH = "cloudresearch"
    CUSTOM = "custom"


class CompletionCodes(StrEnum):
    """``agentbank.studies.completion.CompletionCodes``'s choices, for --help without the studies' models."""

    PANEL = "panel"
    PER_PARTICIPANT = "per_participant"


STUDY = Annotated[str, typer.Argument(help="The study's name or id.")]
URL = Annotated[
    str | None, typer.Option(help="The server's public address; by default the one `agentbank serve` runs on.")
]

study_cli = typer.Typer(help="Studies: invite a cohort, follow each participant's stage, remind for the retest.")
cli.add_typer(study_cli, name="study")


@study_cli.command("create")
def create(
    name: Annotated[str, typer.Argument(help="A name for the study (unique).")],
    target: Annotated[int, typer.Option("--target", help="How many participants the study sets out to have.")],
    days: Annotated[int, typer.Option("--days", help="Days until its invitations expire.")] = 60,
    panel: Annotated[Panel, typer.Option(help="Where it recruits.")] = Panel.NONE,
    panel_param: Annotated[
        str | None, typer.Option(help="A custom panel's query parameter for its participant id.")
    ] = None,
    completion_url: Annotated[str | None, typer.Option(help="Where the interview's end sends the person.")] = None,
    retest_completion_url: Annotated[str | None, typer.Option(help="Where the retest's end sends them.")] = None,
    completion_codes: Annotated[
        CompletionCodes,
        typer.Option(
            help="panel: the URLs carry the panel's one code; per_participant: each person's own, in "
            "the place of {code} in them."
        ),
    ] = CompletionCodes.PANEL,
) -> None:
    """Create a study on the interview script this bank runs."""
    from agentbank.db import transaction
    from agentbank.studies import completion, setup
    from interviewer.session.script import load_script

    script, now = load_script(), datetime.now(UTC)
    plan = setup.StudyPlan(name, script.key, script.version, target, now + timedelta(days=days),
                           setup.Panel(panel.value), panel_param, completion_url, retest_completion_url,
                           completion.CompletionCodes(completion_codes.value))  # fmt: skip
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        study = setup.create_study(session, plan, coordinator(), now)
        console.print(f"study {study.name!r} ({study.id}): {script.key} v{script.version}, target {target}, "
                      f"expires {study.expires_at:%Y-%m-%d}")  # fmt: skip


@study_cli.command("transfer")
def transfer(
    study: STUDY,
    to: Annotated[
        str | None, typer.Option("--to", help="The client that owns it from now on; without it, the operator.")
    ] = None,
) -> None:
    """Give a study to another coordinator's client (only its owner reaches it through the API)."""
    from agentbank.db import transaction
    from agentbank.studies import ownership, setup

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        found = ownership.transfer(session, setup.find_study(session, study), to, coordinator())
        console.print(f"study {found.name!r} now belongs to {to or 'the operator'}")


@study_cli.command("invite")
def invite(
    study: STUDY,
    count: Annotated[int, typer.Option("--count", "-n", help="How many invitations.")],
    out: Annotated[Path, typer.Option("--out", help="The CSV to write (invitation, code, link).")],
    url: URL = None,
) -> None:
    """Issue N invitations and write their codes and links as CSV (the codes exist nowhere else)."""
    from agentbank.db import transaction
    from agentbank.studies import export, invitations, setup

    settings = load_settings()
    base = url or server_url.current(settings)
    if out.exists():
        raise typer.BadParameter(f"{out} exists; the codes are written once, to a new file")
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        issued = invitations.issue(session, found, count, coordinator(), datetime.now(UTC))
        out.write_text(export.invitations_csv(issued, lambda code: export.invitation_link(base, code)))
    console.print(f"{count} invitations to {found.name!r} written to {out}")


@study_cli.command("link")
def link(study: STUDY, url: URL = None) -> None:
    """Print the study's open link for a panel (a new one: an earlier link stops working)."""
    from agentbank.db import transaction
    from agentbank.studies import export, invitations, setup

    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        code = invitations.open_link(session, found, coordinator())
        console.print(export.open_link(url or server_url.current(settings), found, code), soft_wrap=True)


@study_cli.command("status")
def status(study: STUDY) -> None:
    """The funnel, drop-off by module and the interviews flagged for quality."""
    from rich.table import Table

    from agentbank.db import transaction
    from agentbank.studies import setup, stages

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        seen = stages.read_progress(session, setup.find_study(session, study), datetime.now(UTC), coordinator())
    console.print(f"[bold]{seen.study.name}[/] · {seen.invited} invited · target {seen.study.target_size}")
    table = Table("stage", "now", "reached")
    reached = dict(seen.funnel)
    for stage in stages.Stage:
        if seen.counts[stage] or stage in reached:
            table.add_row(stage.value, str(seen.counts[stage]), str(reached.get(stage, "")))
    console.print(table)
    if any(seen.outcomes.values()):  # what the panel reported, recorded with `agentbank study outcomes`
        said = ", ".join(f"{n} {outcome.value.replace('_', ' ')}" for outcome, n in seen.outcomes.items())
        console.print(f"the panel reported: {said}")
    if seen.modules:
        modules = Table("module", "reached", "under way", "paused")
        for m in seen.modules:
            modules.add_row(m.title, str(m.reached), str(m.under_way), str(m.paused))
        console.print(modules)
    flagged = [s for s in seen.standings if s.quality and s.quality.flags]
    for s in flagged:
        console.print(f"invitation {s.invitation}: {', '.join(s.quality.flags)}")  # type: ignore[union-attr]


@study_cli.command("export")
def export_csv(study: STUDY, out: Annotated[Path, typer.Option("--out", help="The CSV to write.")]) -> None:
    """Write every participant's stage, times and interview quality as CSV (withdrawals only counted)."""
    from agentbank.db import transaction
    from agentbank.studies import export, setup

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        out.write_text(export.progress_csv(session, found, datetime.now(UTC), coordinator()))
    console.print(f"{found.name!r} written to {out}")


@study_cli.command("revoke")
def revoke(
    study: STUDY,
    invitation: Annotated[
        list[int] | None, typer.Option("--invitation", help="Repeatable; all unused if none.")
    ] = None,
) -> None:
    """Revoke unused invitations (the numbered ones, or all of them and the open link)."""
    from agentbank.db import transaction
    from agentbank.studies import invitations, setup

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        count = invitations.revoke_unused(session, found, coordinator(), datetime.now(UTC), invitation or None)
    console.print(f"{count} unused invitations revoked")


@study_cli.command("reminders")
def reminders(
    study: STUDY,
    send: Annotated[
        bool, typer.Option("--send", help="Send the reminder by SMTP to those who left a contact.")
    ] = False,
    url: URL = None,
) -> None:
    """List who is due for the retest (by invitation number); with --send, remind them by mail."""
    from agentbank.core.errors import ConfigurationError
    from agentbank.db import transaction
    from agentbank.studies import contacts, setup
    from agentbank.studies.mail import SmtpSender

    settings = load_settings()
    now = datetime.now(UTC)
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        due = contacts.read_due(session, found, now, coordinator())
        for person in due:
            reminded = f"reminded {person.reminded_at:%Y-%m-%d}" if person.reminded_at else "not reminded"
            contact = "contact left" if person.has_contact else "no contact"
            if person.reminder_failed_at:  # tried again at the workers' next run
                reminded += f", sending failed {person.reminder_failed_at:%Y-%m-%d %H:%M}"
            console.print(f"invitation {person.invitation}: due {person.due_at:%Y-%m-%d}, {contact}, {reminded}")
        if not send:
            console.print(f"{len(due)} due for the retest")
            return
        sender = SmtpSender.of(settings)
        if sender is None:
            raise ConfigurationError("no SMTP server is set", hint="set AGENTBANK_SMTP_HOST (and _PORT, _FROM)")
        portal = f"{(url or server_url.current(settings)).rstrip('/')}/portal"
        sent = contacts.send_reminders(session, bank.keys, found, sender, portal, now, coordinator())
    console.print(f"{sent} reminders sent, {len(due)} due")


@study_cli.command("codes")
def codes(study: STUDY, out: Annotated[Path, typer.Option("--out", help="The CSV to write (ending, code).")]) -> None:
    """Write each participant's own completion code, for those who reached an end, to approve them on the panel."""
    import csv

    from agentbank.db import transaction
    from agentbank.studies import completion, setup

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        found = completion.codes(session, bank.keys, setup.find_study(session, study), coordinator())
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("ending", "code"))
        writer.writerows((code.ending.value, code.code) for code in found)
    console.print(f"{len(found)} completion codes written to {out}")


@study_cli.command("outcomes")
def record_outcomes(
    study: STUDY,
    export_csv: Annotated[Path, typer.Argument(help="The panel's export of the study's submissions (CSV).")],
    id_column: Annotated[str, typer.Option(help="The export's column of the panel's id for the person.")] = (
        "Participant id"
    ),
    status_column: Annotated[str, typer.Option(help="The export's column of the submission's status.")] = "Status",
) -> None:
    """Record the panel's returned and timed-out submissions (from its CSV export) as the study's outcomes."""
    from agentbank.db import transaction
    from agentbank.studies import outcomes, setup

    reports, other = outcomes.read_export(export_csv.read_text(encoding="utf-8-sig"), id_column, status_column)
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        found = setup.find_study(session, study)
        done = outcomes.record_outcomes(session, bank.keys, found, reports, datetime.now(UTC), coordinator())
    said = (f"{done.recorded} outcomes recorded, {done.unchanged} unchanged, {done.refused} refused, "
            f"{done.unmatched} panel ids not in the study; {other} other lines left aside")  # fmt: skip
    console.print(said, soft_wrap=True)
