"""The command line imports only the module of the command it runs (its list of commands none), and still
knows every command: its table says of each what the command says of itself."""

import inspect
import json
import os
import subprocess
import sys

import pytest
import typer.main

from app.cli import COMMANDS, MODULES, cli, command_named

pytestmark = pytest.mark.cli

# What the bank's other rooms import that a database command never needs (seconds of imports between them).
HEAVY = ("scipy", "openai", "matplotlib", "fastapi", "evaluation", "opendp")
# What a command's --help never needs: the settings, the database, the domain.
DOMAIN = ("pydantic_settings", "sqlalchemy", "agentbank.db", "interviewer", "procrastinate", "numpy")
COMMAND_MODULES = tuple(f"app.cli.{module}" for module in MODULES)


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


def listed_help(text: str | None) -> str:
    """A command's help as a list of commands shows it: its first paragraph, on one line (typer's rule)."""
    return inspect.cleandoc(text or "").split("\n\n")[0].replace("\n", " ").strip()


def test_every_command_is_known_by_the_module_that_registers_it():
    assert {name: f"app.cli.{entry.module}" for name, entry in COMMANDS.items()} == registered()


def test_the_table_says_of_each_command_what_the_command_says_of_itself():
    group = typer.main.get_command(cli)
    assert isinstance(group, typer.main.TyperGroup)
    shown = {name: listed_help(command.help) for name, command in group.commands.items()}
    assert {name: entry.help for name, entry in COMMANDS.items()} == shown


def test_the_choices_help_names_without_the_domain_are_the_domains_own():
    from agentbank.access.principals import SCOPES
    from agentbank.building.ingest import FORMATS
    from agentbank.consultation.answering import CONDITIONS
    from agentbank.studies.completion import CompletionCodes
    from agentbank.studies.setup import Panel
    from app.cli import agents, evaluate, experiment, service, study
    from evaluation.experiments.runs import EXPERIMENT_CONDITIONS
    from evaluation.runs.records import BANK_CONDITIONS, DEFAULT_CONDITIONS
    from evaluation.runs.records import CONDITIONS as RUN_CONDITIONS

    copies = {"scopes": service.SCOPE_NAMES, "formats": agents.FORMATS, "conditions": agents.CONDITIONS,
              "experiment conditions": experiment.EXPERIMENT_CONDITIONS, "panels": [p.value for p in study.Panel],
              "completion codes": [c.value for c in study.CompletionCodes],
              "evaluate conditions": evaluate.CONDITIONS_HELP}  # fmt: skip
    assert copies == {
        "scopes": ", ".join(SCOPES), "formats": FORMATS, "conditions": CONDITIONS[:4],
        "experiment conditions": EXPERIMENT_CONDITIONS, "panels": [p.value for p in Panel],
        "completion codes": [c.value for c in CompletionCodes],
        "evaluate conditions": f"Comma-separated: {', '.join(RUN_CONDITIONS)}. "
        f"Default: {', '.join(DEFAULT_CONDITIONS)}; for the bank: {', '.join(BANK_CONDITIONS)}.",
    }  # fmt: skip


def test_the_command_is_the_first_word_that_is_not_an_option():
    assert command_named(["-v", "db", "current"]) == "db"
    assert command_named(["--verbose", "ask", "--purpose", "x"]) == "ask"
    assert command_named(["--help"]) is None


def run(*args: str, data_dir, watch: tuple[str, ...] = HEAVY) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``agentbank ARGS`` in a process of its own; also which of ``watch`` (modules, or the packages they
    begin) it had imported when it ended."""
    code = (
        "import atexit, json, sys\n"
        f"watch = {watch!r}\n"
        "seen = lambda: sorted(w for w in watch if any(m == w or m.startswith(w + '.') for m in sys.modules))\n"
        "atexit.register(lambda: print(json.dumps(seen()), file=sys.stderr))\n"
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


def test_the_list_of_commands_imports_none_of_their_modules_and_names_every_one(tmp_path):
    done, imported = run("--help", data_dir=tmp_path / "data", watch=COMMAND_MODULES + DOMAIN)
    assert done.returncode == 0, done.stderr
    assert imported == []
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("│ ")]
    listed = [row[1] for row in rows if not row[1].startswith("-")]
    assert listed == list(COMMANDS)  # in the table's order, each with its help
    assert all(entry.help[:60] in done.stdout for entry in COMMANDS.values())
    unknown, imported = run("bulid", data_dir=tmp_path / "data", watch=COMMAND_MODULES)
    assert unknown.returncode == 2 and "No such command" in unknown.stderr and "build" in unknown.stderr
    assert imported == []


@pytest.mark.parametrize(("args", "module"), [(("db", "--help"), "system"), (("worker", "--help"), "service"),
                                              (("study", "create", "--help"), "study")])  # fmt: skip
def test_a_commands_help_imports_its_module_alone_and_none_of_the_domain(tmp_path, args, module):
    done, imported = run(*args, data_dir=tmp_path / "data", watch=COMMAND_MODULES + DOMAIN)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout
    assert imported == [f"app.cli.{module}"]
