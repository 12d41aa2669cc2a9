"""``agentbank audit``: verify the log and its tree, sign a checkpoint (and have it cosigned), rotate the key."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.common import cli, console, load_settings, open_bank, operator

if TYPE_CHECKING:  # the audit log's machinery is imported when a command runs, not for its --help
    from agentbank.audit.outcome import Verification
    from agentbank.audit.witnesses.client import Answer

audit_cli = typer.Typer(help="The tamper-evident audit log.", no_args_is_help=True)
cli.add_typer(audit_cli, name="audit")


@audit_cli.command("verify")
def audit_verify(
    witness: Annotated[
        list[Path] | None,
        typer.Option(help="A copy of the checkpoints kept elsewhere (JSON lines, or /v1/audit/checkpoints)."),
    ] = None,
    without_outside_record: Annotated[
        bool,
        typer.Option(
            "--without-outside-record",
            help="Check the chain even with no checkpoint outside the database (the outside file missing or empty, "
            "no witness): it then shows only that the stored chain is intact, not that the log was not rewritten.",
        ),
    ] = False,
    witnesses: Annotated[
        int | None,
        typer.Option(
            "--witnesses",
            min=0,
            show_default="all that AGENTBANK_AUDIT_WITNESSES names",
            help="How many of the configured witnesses must hold this log's newest head (asked now) and have "
            "cosigned a tree head that verifies; 0 asks none.",
        ),
    ] = None,
) -> None:
    """Check the chain and the Merkle tree against the heads kept outside the database, and ask the configured
    witnesses whether they hold this log's newest head; name each kind of tampering.

    Fails (exit 2) when there is no checkpoint, or no signed tree head, outside the database to check
    against, unless --without-outside-record says to check what can be checked without one; and when fewer
    witnesses than required (by default every one AGENTBANK_AUDIT_WITNESSES names) could be asked and hold
    the head, or cosigned a head that verifies. A witness that holds a larger log than this one (the log and
    its outside file rolled back together) or a head this one does not extend is a finding (exit 1)."""
    from agentbank.audit.checkpoints import CheckpointFile, parse_checkpoints
    from agentbank.audit.tiles import outside_tiles
    from agentbank.audit.trust import TrustedKeys
    from agentbank.audit.verification import verify_log
    from agentbank.audit.witnesses.client import Witnessing, configured
    from agentbank.core.errors import ConfigurationError

    settings = load_settings()
    keys = TrustedKeys.of(settings)  # the current key, and every retired one until it retired
    clients = configured(settings)
    cosigners = [w.verifier for w in clients]
    required = len(clients) if witnesses is None else witnesses
    if required > len(cosigners):
        raise ConfigurationError(
            f"--witnesses {required}, but AGENTBANK_AUDIT_WITNESSES names {len(cosigners)}",
            hint="name the witnesses (their URLs and keys) in the settings",
        )
    outside, problems = CheckpointFile.of(settings).read()
    for path in witness or []:
        if not path.exists():
            raise ConfigurationError(f"no witness copy at {path}")
        points, unreadable = parse_checkpoints(path.read_text(encoding="utf-8"), str(path))
        outside, problems = outside + points, problems + unreadable
    with open_bank(settings, models=False) as bank:
        # Asked before the records are read, so a head signed meanwhile (that a witness may hold) is read too.
        answers = Witnessing(settings, bank.sessions).confirm() if required else []
        with bank.sessions() as session:
            tiles = None if without_outside_record else outside_tiles(settings)  # the tiles are an outside record too
            result = verify_log(session, keys, outside, cosigners, tiles)
    confirmed = _witness_answers(answers, result)
    for problem in problems:
        console.print(f"[red]unreadable[/] {problem}")
    for note in result.notes:
        console.print(f"[yellow]note[/] {note}")
    missing = [m for m in (result.missing_outside(str(settings.audit_checkpoint_path)), result.missing_tree()) if m]
    if missing and not without_outside_record:
        _findings(result)
        for reason in missing:
            console.print(f"[red]not verified[/] {reason}")
        console.print("restore the outside file or pass a witness's copy (--witness); a bank upgraded to the tree "
                      "signs its first tree head with `agentbank audit checkpoint`; --without-outside-record checks "
                      "the stored chain alone")  # fmt: skip
        raise typer.Exit(2)
    if missing:
        console.print(
            f"[yellow]without an outside record[/] {'; '.join(missing)}. What follows checks only the chain as the "
            "database stores it: whoever can write to the database could have cut or rewritten the log and "
            "recomputed its chain and checkpoints, and this check would still pass"
        )
    witnessed = result.witnessed(required) if required else None
    if required and (witnessed is None or confirmed < required) and result.ok:
        if witnessed is None:
            console.print(f"[red]not verified[/] no tree head carries valid cosignatures of {required} witness(es)")
        if confirmed < required:
            console.print(
                f"[red]not verified[/] {confirmed} of the {required} witnesses needed could be asked and hold this "
                "log's newest head: without them, a log rolled back together with its outside file cannot be told "
                "from a real one (--witnesses lowers the number)"
            )
        raise typer.Exit(2)
    if result.uncovered:
        first, last = result.uncovered
        console.print(
            f"[yellow]uncovered[/] events {first}–{last} are in no outside checkpoint yet: until the next one "
            "they could be cut, or fabricated ones added, unseen"
        )
    if result.ok and not problems:
        at = f"; newest outside checkpoint at {result.outside_seq}" if result.outside_seq else ""
        tree = f"; Merkle tree checked against signed heads up to {result.outside_tree_size}" if not missing else ""
        seen = f"; cosigned at {witnessed.head.size} by {', '.join(sorted(witnessed.cosigners))}" if witnessed else ""
        retired = f", retired keys {', '.join(r.key_id for r in keys.retired)}" if keys.retired else ""
        what = "the stored chain of " if missing else ""
        console.print(
            f"[green]verified[/] {what}{result.events} events, head {result.head_seq}{at}{tree}{seen} "
            f"(key {keys.key_id}{retired})"
        )
        return
    _findings(result)
    raise typer.Exit(1)


def _witness_answers(answers: list[Answer], result: Verification) -> int:
    """Print what each witness said, add a witness that shows a rollback or a fork to the findings; how many
    hold this log's newest head."""
    from agentbank.audit.outcome import Finding

    for answer in answers:
        if answer.rolled_back:
            result.findings.append(Finding("rolled_back", answer.held, f"witness {answer.witness} {answer.message}"))
        elif answer.refused:
            message = f"witness {answer.witness} holds a head this log's newest does not extend: {answer.message}"
            result.findings.append(Finding("inconsistent", None, message))
        elif answer.cosigned:
            console.print(f"[green]witness {answer.witness}[/] {answer.message}")
        else:
            console.print(f"[yellow]witness {answer.witness}[/] could not be asked: {answer.message}")
    return sum(1 for answer in answers if answer.cosigned)


def _findings(result: Verification) -> None:
    for finding in result.findings:
        console.print(f"[red]{finding.kind}[/] {finding.message}")


@audit_cli.command("checkpoint")
def audit_checkpoint() -> None:
    """Sign the log's current head now, publish it, and ask the configured witnesses to cosign it (workers
    also sign on their own, on a schedule, and ask the witnesses after each checkpoint)."""
    from agentbank.audit.checkpoints import CheckpointFile, checkpoint_now
    from agentbank.audit.signing_keys import load_signer
    from agentbank.audit.witnesses.client import Witnessing
    from agentbank.core.errors import ConfigurationError
    from agentbank.db import transaction

    settings = load_settings()
    signer = load_signer(settings)
    with open_bank(settings, models=False) as bank:
        with transaction(bank.sessions) as session:
            point = checkpoint_now(bank.sessions, session, signer, CheckpointFile.of(settings), operator())
        if point is None:
            raise ConfigurationError("the audit log is empty: there is nothing to sign")
        console.print(
            f"checkpoint at event {point.seq}, head {point.head_hash.hex()[:16]}…, key {signer.key_id}, "
            f"appended to {settings.audit_checkpoint_path}"
        )
        answers = Witnessing(settings, bank.sessions).round(retry_now=True)  # the transaction is closed
    for answer in answers:
        style = "green" if answer.cosigned else "red" if answer.rolled_back else "yellow"
        console.print(f"[{style}]witness {answer.witness}[/] {answer.message}")


@audit_cli.command("note-key")
def audit_note_key() -> None:
    """Print the verifier key of the log's tree heads (name+id+base64), for a witness's --log."""
    from agentbank.audit.signing_keys import load_signer

    console.print(load_signer(load_settings()).verifier.vkey(), soft_wrap=True)


@audit_cli.command("rotate-key")
def audit_rotate_key() -> None:
    """Retire the checkpoint signing key for a new one; what the old key signed still verifies.

    The head is signed with the old key, the old key signs a handover to the new one (published in
    retired-keys.jsonl beside the outside checkpoints), the key file is replaced and the head signed
    again with the new key. Workers and the API pick up the new key file on their next checkpoint.
    Witnesses know the log by its key: give them the new one (`agentbank audit note-key`).
    """
    from agentbank.audit.trust import retired_keys_path, rotate_signing_key

    settings = load_settings()
    with open_bank(settings, models=False) as bank:
        old, new = rotate_signing_key(settings, bank.sessions, operator())
    console.print(
        f"retired key {old}; checkpoints are now signed with {new} (handover in {retired_keys_path(settings)})"
    )
