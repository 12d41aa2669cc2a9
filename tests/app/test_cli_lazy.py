"""The command line imports only the module of the command it runs, and still knows every command."""

import json
import os
import subprocess
import sys

import pytest

from app.cli import COMMANDS, cli, command_named

pytestmark = pytest.mark.cli

# What the bank's other rooms import that a database command never needs (seconds of imports between them).
HEAVY = ("scipy", "openai", "matplotlib", "fastapi", "evaluation", "opendp")


def registered() -> dict[str, str]:
    """Every command of the whole command line, and the module that registers it."""
    names = {}
    for command in cli.registered_commands:
        assert command.callback is not None
        names[command.name or command.callback.__name__.replace("_", "-")] = command.callback.__module__
    for group in cli.registered_groups:
        typer_instance = group.typer_instance
        assert typer_instance is not None
        modules = {c.callback.__module__ for c in typer_instance.registered_commands if c.callback is not None}
        assert len(modules) == 1, (group.name, modules)
        names[str(group.name)] = modules.pop()
    return names


def test_every_command_is_known_by_the_module_that_registers_it():
    assert {name: f"app.cli.{module}" for name, module in COMMANDS.items()} == registered()


def test_the_command_is_the_first_word_that_is_not_an_option():
    assert command_named(["-v", "db", "current"]) == "db"
    assert command_named(["--verbose", "ask", "--purpose", "x"]) == "ask"
    assert command_named(["--help"]) is None


def run(*args: str, data_dir) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``agentbank ARGS`` in a process of its own; also which of HEAVY it had imported when it ended."""
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr))\n"
        "from app.cli import main\n"
        f"sys.argv = ['agentbank', *{list(args)!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "AGENTBANK_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def test_a_database_command_imports_none_of_the_rest_of_the_bank(tmp_path):
    done, heavy = run("db", "current", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "at nothing" in done.stdout
    assert heavy == []


def test_the_help_and_an_unknown_command_still_name_every_command(tmp_path):
    done, _ = run("--help", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in COMMANDS)
    unknown, _ = run("bulid", data_dir=tmp_path / "data")
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
