"""The reference is drawn from the code and holds all of it: every command and option, every setting with
its meaning, every operation of the HTTP API and every column of the inventory appear on its pages, and each
reference page carries the marker its build fills. Something the code adds without a description fails here
or in the tests that require one (tests/app/cli/test_help_complete.py, test_openapi_described.py,
tests/agentbank/core/test_settings_described.py)."""

from __future__ import annotations

import re

import pytest

from agentbank.core.settings import Settings
from agentbank.db.inventory import INVENTORY
from app import reference
from app.reference import api, commands, inventory, settings
from tests.docs import pages


@pytest.fixture(scope="module")
def command_page() -> str:
    return commands.markdown()


def test_every_command_and_option_is_on_the_commands_page(command_page):
    seen = 0
    for context, command in commands.tree():
        path = commands.name_of(context)
        assert f"`{path}`" in command_page, path
        section = command_page.split(f"`{path}`\n", 1)[1].split("\n#", 1)[0]
        assert commands.usage(context, command) in section, path
        for parameter in commands.parameters(command):
            for flag in [*parameter.opts, *parameter.secondary_opts]:
                if parameter.param_type_name == "option":
                    assert f"`{flag}`" in section, f"{path} {flag}"
            assert reference.cell(parameter.help) in section, f"{path} {parameter.name}"
        seen += 1
    assert seen >= 50  # every command of the table and every sub-command, not the top alone


def test_every_setting_is_on_the_settings_page_with_its_meaning():
    page = settings.markdown()
    for name, field in Settings.model_fields.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{settings.variable(name)}` |"))
        assert reference.cell(field.description) in row, name
    assert settings.default_of(Settings.model_fields["suppression_k"]) == "`10`"
    assert settings.default_of(Settings.model_fields["database_url"]) == "unset"


def test_every_operation_is_on_the_api_page():
    openapi = api.document()
    page = api.markdown()
    found = list(api.operations(openapi))
    assert len(found) >= 80
    for method, path, operation in found:
        assert f"### `{method} {path}`" in page, f"{method} {path}"
        assert (operation.get("description") or operation["summary"]).strip() in page, f"{method} {path}"


def test_every_column_is_on_the_inventory_page():
    page = inventory.markdown()
    for table, columns in INVENTORY.items():
        section = page.split(f"### `{table}`\n", 1)[1].split("\n### ", 1)[0]
        for column, kind in columns.items():
            assert f"| `{column}` | `{kind.name.lower()}` |" in section, f"{table}.{column}"


def test_each_reference_is_on_exactly_one_page_and_an_unknown_one_fails_the_build():
    used = [m for page in pages.pages() for m in reference.MARKER.findall(page.read_text(encoding="utf-8"))]
    assert sorted(used) == sorted(reference.PAGES)
    with pytest.raises(KeyError, match="known: api, commands"):
        reference.expand("<!-- reference: nothing -->")
    assert re.search(r"\| `AGENTBANK_SUPPRESSION_K` \|", reference.expand("<!-- reference: settings -->"))
