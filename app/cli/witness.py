"""``agentbank witness``: run an independent witness of another log's tree heads, or print its key.

The witness needs only its own directory (its key and the heads it cosigned) and the verifier keys of
the logs it witnesses; it reads none of the bank's settings, so it can run anywhere, as anyone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import cli, console

witness_cli = typer.Typer(
    help="An independent witness that cosigns a log's tree heads (c2sp.org/tlog-witness).", no_args_is_help=True
)
cli.add_typer(witness_cli, name="witness")

Directory = Annotated[Path, typer.Option("--dir", help="The witness's own directory: its key and its state.")]
Name = Annotated[str, typer.Option(help="The witness's key name, a schema-less URL (witness.example/w1).")]


@witness_cli.command("key")
def witness_key(directory: Directory, name: Name) -> None:
    """Print the witness's verifier key (made on first use), for the log's AGENTBANK_AUDIT_WITNESSES."""
    from agentbank.audit.witnesses.server import Witness

    console.print(Witness(name, directory, []).verifier.vkey(), soft_wrap=True)


@witness_cli.command("serve")
def witness_serve(
    directory: Directory,
    name: Name,
    log: Annotated[
        list[str],
        typer.Option(
            "--log", help="A log's verifier key (name+id+base64), as the bank's `audit note-key` prints; repeatable."
        ),
    ],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8100,
) -> None:
    """Cosign each log's tree heads that extend the last one cosigned; refuse rollbacks and forks."""
    import uvicorn

    from agentbank.audit import notes
    from agentbank.audit.witnesses.server import Witness
    from app.witness import create_witness_app

    try:
        logs = [notes.Verifier.parse(key) for key in log]
    except notes.NoteError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    witness = Witness(name, directory, logs)
    console.print(f"witness {name} ({witness.verifier.vkey()}) serving on http://{host}:{port}; Ctrl-C to stop")
    uvicorn.run(create_witness_app(witness), host=host, port=port, log_level="warning")
