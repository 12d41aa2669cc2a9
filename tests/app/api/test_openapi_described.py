"""Every operation of the OpenAPI document says what it does and is tagged: the documentation's pages of
the HTTP API are generated from the document, so a route without them has no entry, or a bare one.

FastAPI makes a summary from the endpoint's name when none is given ("Get Job" of ``get_job``), and takes
the description from its docstring: the name alone does not count as saying what the route does."""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI

from app.api import create_app


def named_summary(operation: dict[str, Any], path: str, method: str) -> str | None:
    """The summary FastAPI makes from the endpoint's name, recovered from its default operation id (the
    name, the path and the method, each character that is no word character an underscore)."""
    suffix = re.sub(r"\W", "_", path) + "_" + method
    operation_id = operation.get("operationId", "")
    if not operation_id.endswith(suffix) or len(operation_id) == len(suffix):
        return None  # an operation id of its own: the summary cannot be told from one made from the name
    return operation_id[: -len(suffix)].replace("_", " ").title()


def undescribed(document: dict[str, Any]) -> list[str]:
    """Each operation of ``document`` with no summary, no description (nor a summary written for it), or no
    tag: one line each."""
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            summary = (operation.get("summary") or "").strip()
            description = (operation.get("description") or "").strip()
            if not summary:
                found.append(f"{where}: no summary")
            if not description and (not summary or summary == named_summary(operation, path, method)):
                found.append(f"{where}: no description (a docstring) and no summary but its name")
            if not operation.get("tags"):
                found.append(f"{where}: no tag")
    return found


def test_every_operation_has_a_summary_a_description_and_a_tag(settings):
    # The document needs no database: the app's lifespan (which opens the bank) never runs here.
    document = create_app(settings).openapi()
    assert len(document["paths"]) > 50  # the whole API, not an empty document
    assert undescribed(document) == []


def test_the_check_names_an_operation_without_them():
    tiny = FastAPI()

    @tiny.get("/v1/described", tags=["tiny"])
    def described() -> None:
        """What it does."""

    @tiny.get("/v1/summarized/{key}", tags=["tiny"], summary="Summarized by hand")
    def summarized(key: str) -> None:
        pass

    @tiny.post("/v1/bare-route")
    def bare_route() -> None:
        pass

    assert undescribed(tiny.openapi()) == [
        "POST /v1/bare-route: no description (a docstring) and no summary but its name",
        "POST /v1/bare-route: no tag",
    ]
