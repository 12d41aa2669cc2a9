"""The HTTP API from its own OpenAPI document: each operation by tag, with its parameters and answers."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app import reference

METHODS = ("get", "post", "put", "patch", "delete")


def document() -> dict[str, Any]:
    """The application's OpenAPI document, made without a database (nothing is opened until it serves)."""
    from agentbank.core.settings import Settings
    from app.api import create_app

    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), chat_provider="fake", embedder_provider="fake")
        return create_app(settings).openapi()


def operations(openapi: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in openapi["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def _parameters(operation: dict[str, Any]) -> list[str]:
    given = operation.get("parameters", [])
    if not given:
        return []
    lines = ["| parameter | in | required | meaning |", "|---|---|---|---|"]
    for parameter in given:
        meaning = parameter.get("description") or parameter.get("schema", {}).get("description")
        required = "yes" if parameter.get("required") else ""
        lines.append(f"| `{parameter['name']}` | {parameter['in']} | {required} | {reference.cell(meaning)} |")
    return [*lines, ""]


def _answer(code: str, answer: dict[str, Any]) -> str:
    return f"`{code}` {reference.cell(answer.get('description'))}"


def common_answers(openapi: dict[str, Any]) -> set[str]:
    """The answers every operation may give (the errors every route shares), said once for the whole API."""
    each = [{_answer(c, a) for c, a in op.get("responses", {}).items()} for _, _, op in operations(openapi)]
    return set.intersection(*each) if each else set()


def markdown() -> str:
    openapi = document()
    common = common_answers(openapi)
    by_tag: dict[str, list[str]] = {}
    for method, path, operation in operations(openapi):
        said = operation.get("description") or operation.get("summary")
        lines = [f"### `{method} {path}`", "", (said or "").strip(), ""]
        lines += _parameters(operation)
        own = [_answer(c, a) for c, a in operation.get("responses", {}).items() if _answer(c, a) not in common]
        if own:
            lines += [f"Answers: {'; '.join(own)}.", ""]
        by_tag.setdefault((operation.get("tags") or ["other"])[0], []).append("\n".join(lines))
    sections = [f"Every operation may also answer: {'; '.join(sorted(common))}.\n"]
    for tag, entries in by_tag.items():
        sections.append(f"## {tag}\n\n" + "\n".join(entries))
    return "\n".join(sections)
