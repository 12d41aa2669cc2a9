"""Every command of the command line, with its usage, help and options, from the command line itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from app import reference

# Typer carries its own copy of click, so its commands are read by what they have, not by click's classes.
Command = Any
Context = Any


def tree() -> Iterator[tuple[Context, Command]]:
    """Each command and group under ``agentbank``, depth first, in the order ``--help`` lists them."""
    from app.cli import register

    root = typer.main.get_command(register())
    yield from _walk(root.context_class(root, info_name="agentbank"), root)


def _walk(context: Context, command: Command) -> Iterator[tuple[Context, Command]]:
    yield context, command
    if hasattr(command, "list_commands"):
        for name in _ordered(context, command.list_commands(context)):
            child = command.get_command(context, name)
            if child is not None and not child.hidden:
                yield from _walk(child.context_class(child, info_name=name, parent=context), child)


def _ordered(context: Context, names: list[str]) -> list[str]:
    """The top level in the order ``agentbank --help`` lists it; a group's own commands as registered."""
    if context.parent is not None:
        return names
    from app.cli import COMMANDS

    listed = list(COMMANDS)
    return sorted(names, key=lambda name: listed.index(name) if name in listed else len(listed))


def usage(context: Context, command: Command) -> str:
    """How the command is written: its options, its arguments by name, and a group's commands."""
    pieces = [name_of(context)]
    given = parameters(command)
    if any(p.param_type_name == "option" for p in given):
        pieces.append("[OPTIONS]")
    for argument in (p for p in given if p.param_type_name == "argument"):
        written = _names(argument).strip("`") + ("..." if argument.nargs == -1 else "")
        pieces.append(written if argument.required else f"[{written}]")
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def name_of(context: Context) -> str:
    return str(context.command_path)


def parameters(command: Command) -> list[Any]:
    """What a person may give the command (the automatic ``--help`` and shell completion left out)."""
    return [p for p in command.params if p.name not in {"help", "install_completion", "show_completion"}]


def _default(parameter: Any) -> str:
    default = parameter.default
    if default is None or default is False or callable(default) or default == ():
        return ""
    if getattr(parameter, "is_flag", False) and default is True:
        return "on"
    return f"`{default}`"


def _names(parameter: Any) -> str:
    if parameter.param_type_name == "argument":
        return f"`{(parameter.metavar or parameter.name).upper()}`"
    return ", ".join(f"`{o}`" for o in [*parameter.opts, *parameter.secondary_opts])


def markdown() -> str:
    sections = []
    for context, command in tree():
        depth = min(context.command_path.count(" ") + 1, 4)
        lines = [f"{'#' * (depth + 1)} `{name_of(context)}`", ""]
        lines += [reference.cell(command.help), ""]
        lines += ["```text", usage(context, command), "```", ""]
        given = parameters(command)
        if given:
            lines += ["| argument or option | default | meaning |", "|---|---|---|"]
            for parameter in given:
                meaning = getattr(parameter, "help", None)
                lines.append(f"| {_names(parameter)} | {_default(parameter)} | {reference.cell(meaning)} |")
            lines.append("")
        sections.append("\n".join(lines))
    return "\n".join(sections)
