"""``agentbank interview``: invitations for the web page, and the whole interview in the terminal.

Every turn is committed as it happens, so Ctrl-C loses nothing: it pauses the interview, and
``--resume CODE`` continues it later, in this process or any other.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli import server_url
from app.cli.common import cli, console, load_settings, open_bank, operator

if TYPE_CHECKING:  # the interviewer (its models, speech, scripts) is imported when an interview runs
    from agentbank.runtime.bank import Bank
    from interviewer.services import Services
    from interviewer.session import interviews
    from interviewer.turns import InterviewTurn

DISCLOSURE = (
    "Your interviewer is an AI: a computer program, not a person. It will ask about your life and may ask\n"
    "short follow-up questions. Every answer is saved as you type it. Press Ctrl-C at any time to pause.\n"
    "Your transcript will be used for research, to build a model that answers survey questions as you might;\n"
    "you can read and edit it at the end, see who used your model, and withdraw later."
)

interview_cli = typer.Typer(help="Interviews: invitations, and the interview itself in the terminal.")
cli.add_typer(interview_cli, name="interview")


@interview_cli.command("invite")
def invite(
    url: Annotated[
        str | None, typer.Option(help="The server's public address; by default the one `agentbank serve` runs on.")
    ] = None,
) -> None:
    """Print a one-time invitation code and the link to the interview page."""
    from agentbank.db import transaction
    from interviewer.session import invitations

    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        code = invitations.create_invitation(session, operator())
    base = (url or server_url.current(settings)).rstrip("/")
    console.print(f"invitation code: {code}")
    console.print(f"interview page:  {base}/interview#invite={code}", soft_wrap=True)


@interview_cli.callback(invoke_without_command=True)
def interview(
    ctx: typer.Context,
    text: Annotated[bool, typer.Option("--text", help="Hold the interview here, typing the answers.")] = False,
    script: Annotated[Path | None, typer.Option("--script", help="An interview script (YAML).")] = None,
    short: Annotated[bool, typer.Option("--short", help="One question per module, for a quick try.")] = False,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a paused interview by its code.")] = None,
) -> None:
    """Run an interview in the terminal (``--text``), or see the subcommands."""
    if ctx.invoked_subcommand is not None:
        return
    if not text:
        console.print(ctx.get_help())
        raise typer.Exit(0)
    from agentbank.core.statuses import InterviewStatus
    from agentbank.db import transaction
    from agentbank.providers.factory import build_chat_model
    from interviewer.deciding.reflecting import Summaries
    from interviewer.services import Services
    from interviewer.session import lifecycle
    from interviewer.session.script import load_script, shorten

    settings = load_settings()
    chosen = load_script(script)
    if short:
        chosen = shorten(chosen)
    with open_bank(settings, models=False) as bank:
        bank.chat = build_chat_model(settings)  # closed with the bank
        services = Services(
            keys=bank.keys,
            chat=bank.chat,
            summaries=Summaries.of(settings),
        )
        code = _resume(bank, services, resume) if resume else _begin(bank, services, chosen)
        if code is None:
            return
        try:
            _converse(bank, services, code)
        except (KeyboardInterrupt, EOFError):
            with transaction(bank.sessions) as session:
                interview_row = _interview(session, code)
                if interview_row.status == InterviewStatus.ACTIVE:
                    lifecycle.pause(session, services, interview_row)
            console.print(f"\npaused. Continue with: agentbank interview --text --resume {code}")


def _begin(bank: Bank, services: Services, script) -> str | None:
    from agentbank.db import transaction
    from interviewer.session import invitations

    console.print(DISCLOSURE)
    if not typer.confirm("Do you agree to take part, be recorded, and have your transcript used this way?"):
        console.print("Nothing was recorded. Thank you.")
        return None
    with transaction(bank.sessions) as session:
        invite_code = invitations.create_invitation(session, operator())
        consent = dict.fromkeys(invitations.CONSENT_ITEMS, True)
        started = invitations.start(session, services, invite_code, consent, script=script)
    console.print(f"[dim]your resume code (keep it to continue later): {started.token}[/]")
    return started.token


def _resume(bank: Bank, services: Services, code: str) -> str:
    from agentbank.core.statuses import InterviewStatus
    from agentbank.db import transaction
    from interviewer.turns import InterviewTurn

    with transaction(bank.sessions) as session:
        status = _interview(session, code).status
    if status == InterviewStatus.PAUSED:
        _turn(bank, services, code, InterviewTurn.resume)
    return code


def _interview(session, code: str, *, lock: bool = False):
    from agentbank.access.clients import principal_for_token
    from agentbank.core.errors import AuthenticationRequiredError
    from interviewer.session import interviews

    principal = principal_for_token(session, code)
    if principal is None or principal.kind != "participant" or principal.pk is None:
        raise AuthenticationRequiredError("this resume code is unknown or has expired")
    return interviews.current(session, principal.pk, lock=lock)


def _turn(bank: Bank, services: Services, code: str,
          take: Callable[[InterviewTurn], interviews.InterviewState]) -> interviews.InterviewState:  # fmt: skip
    """One turn, taken as the server takes it (the answer committed before the model decides), then the
    notes on the answer."""
    from agentbank.db import transaction
    from interviewer.deciding import notes
    from interviewer.turns import InterviewTurn

    transactions = partial(transaction, bank.sessions)
    with bank.sessions() as session:
        turn = InterviewTurn.load(session, services, _interview(session, code, lock=True), transactions)
        state = take(turn)
    notes.after_reply(transactions, services, turn.participant_id)
    return state


def _converse(bank: Bank, services: Services, code: str) -> None:
    """Ask, read an answer, save it, until the questions are over; then the review."""
    from agentbank.core.statuses import InterviewStatus
    from agentbank.db import transaction
    from interviewer.session import lifecycle
    from interviewer.session.transcripts import state_of
    from interviewer.turns import InterviewTurn

    while True:
        with transaction(bank.sessions) as session:
            state = state_of(session, services, _interview(session, code))
        if state.status == InterviewStatus.ACTIVE and state.awaiting_reply:  # stopped while the model decided
            state = _turn(bank, services, code, InterviewTurn.resume)
        if state.status != InterviewStatus.ACTIVE:
            break
        where = f"[dim]{state.module_title} · question {state.index} of {state.total} · {state.progress}%[/]"
        console.print(f"\n{where}\n[bold]Robin:[/] {state.prompt}")
        answer = ""
        while not answer.strip():
            answer = input("you> ")
        _turn(bank, services, code, partial(InterviewTurn.answer, text=answer))
    with transaction(bank.sessions) as session:
        interview_row = _interview(session, code)
        if interview_row.status == InterviewStatus.FINISHED:
            console.print("This interview is already finished.")
            return
        console.print(f"\n[bold]Robin:[/] {state_of(session, services, interview_row).prompt}\n")
        turns = lifecycle.transcript(session, services, interview_row)
    for turn in turns:
        who = "Robin" if turn.speaker == "interviewer" else "you"
        console.print(f"[{turn.position}] {who}: {turn.text}")
    chosen = typer.prompt("Numbers of your answers to remove (comma-separated, empty for none)", default="")
    redactions = [lifecycle.Redaction(int(n)) for n in chosen.replace(" ", "").split(",") if n.isdigit()]
    if not typer.confirm("Confirm this transcript?"):
        console.print(f"Not confirmed. Review it later with: agentbank interview --text --resume {code}")
        return
    with transaction(bank.sessions) as session:
        access = lifecycle.finish(session, services, _interview(session, code), redactions, confirm=True)
    console.print(f"\nThank you. Your access code for the portal (keep it safe):\n{access}")
