"""Every command, group, option and argument of the command line says what it is: the documentation's
pages of the command line are generated from its help, so a command or option without help has no entry."""

from __future__ import annotations

from typing import Annotated

import typer
import typer.main
from typer.core import TyperGroup

from app.cli import COMMANDS, register


def undocumented(command: object, path: str) -> list[str]:
    """What under ``command`` (a click command of a Typer app, its groups walked) has no help: one line each.

    The automatic --help option is not among a command's ``params`` (click adds it when it parses), so every
    parameter there, option or argument, needs its own help; Typer's arguments keep theirs in ``help``."""
    found = []
    if not (getattr(command, "help", None) or "").strip():
        found.append(f"{path}: the command has no help")
    for param in getattr(command, "params", []):
        if not (getattr(param, "help", None) or "").strip():
            found.append(f"{path}: {type(param).__name__} {param.name!r} has no help")
    if isinstance(command, TyperGroup):
        for name, sub in command.commands.items():
            found.extend(undocumented(sub, f"{path} {name}"))
    return found


def whole_command_line() -> TyperGroup:
    """The command line with every command's module imported (the list alone names commands lazily)."""
    group = typer.main.get_command(register())
    assert isinstance(group, TyperGroup)
    # Each command of the table is the command its module registers, not the table's stand-in.
    assert set(COMMANDS) <= set(group.commands)
    for name in COMMANDS:
        command = group.commands[name]
        assert command.callback is not None or isinstance(command, TyperGroup), name
    return group


def test_every_command_option_and_argument_has_help():
    assert undocumented(whole_command_line(), "agentbank") == []


def test_the_walk_reaches_every_group_and_its_commands():
    def names(command: object, path: str) -> list[str]:
        found = [path]
        if isinstance(command, TyperGroup):
            for name, sub in command.commands.items():
                found.extend(names(sub, f"{path} {name}"))
        return found

    reached = names(whole_command_line(), "agentbank")
    assert {"agentbank db upgrade", "agentbank audit rotate-key", "agentbank study reminders",
            "agentbank witness serve", "agentbank ask"} <= set(reached)  # fmt: skip


def test_the_check_names_what_lacks_help():
    tiny = typer.Typer(help="A tiny command line.")

    @tiny.command()
    def documented(
        name: Annotated[str, typer.Argument(help="Who.")],
        loud: Annotated[bool, typer.Option(help="Shout.")] = False,
    ) -> None:
        """Greet someone."""

    @tiny.command()
    def bare(
        name: Annotated[str, typer.Argument()],
        times: int = 1,
    ) -> None:
        pass

    group = typer.main.get_command(tiny)
    assert undocumented(group, "tiny") == [
        "tiny bare: the command has no help",
        "tiny bare: TyperArgument 'name' has no help",
        "tiny bare: TyperOption 'times' has no help",
    ]
