"""Every setting, as the environment variable that sets it, with its default and meaning from ``Settings``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from agentbank.core.settings import Settings
from app import reference

PREFIX = "AGENTBANK_"


def variable(name: str) -> str:
    return PREFIX + name.upper()


def default_of(field: FieldInfo) -> str:
    """The default as a person would set it; a computed one is said in the meaning."""
    if field.default_factory is not None:
        return "computed"
    value: Any = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, list | dict | tuple):
        value = json.dumps(value)
    return f"`{value}`"


def markdown() -> str:
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        lines.append(f"| `{variable(name)}` | {default_of(field)} | {reference.cell(field.description)} |")
    return "\n".join(lines) + "\n"
