"""Population margins the open tier's weights are raked to: the operator's file, or the GSS's by default.

A targets file is JSON: ``{"source": "...", "margins": {breakdown: {category: share}}}``. Its
breakdowns and categories are the open tier's own (``agentbank.publication.breakdowns``), so a typo is refused
rather than silently ignored; each margin's shares are normalized to sum to one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ValidationError, field_validator

from agentbank.core.errors import InvalidRequestError
from agentbank.publication.breakdowns import BREAKDOWNS, UNKNOWN

# The cells the weights adjust: sex × age band × race × education × region, as the GSS's own weights do.
RAKED = ("sex", "age_band", "race", "education", "region")


class _TargetsFile(BaseModel):
    source: str
    margins: dict[str, dict[str, float]]

    @field_validator("margins")
    @classmethod
    def _known(cls, margins: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for key, shares in margins.items():
            if key not in BREAKDOWNS:
                raise ValueError(f"unknown breakdown {key!r}; choose among {', '.join(BREAKDOWNS)}")
            allowed = set(BREAKDOWNS[key].categories) - {UNKNOWN}
            extra = sorted(set(shares) - allowed)
            if extra:
                raise ValueError(f"{key}: unknown categories {extra}; expected {sorted(allowed)}")
            if any(v < 0 for v in shares.values()) or sum(shares.values()) <= 0:
                raise ValueError(f"{key}: shares must be non-negative and not all zero")
        return margins


@dataclass(frozen=True)
class Targets:
    """Where the margins come from, and each raked breakdown's shares (summing to one)."""

    source: str
    margins: dict[str, dict[str, float]]


def parse_targets(text: str, name: str = "targets") -> Targets:
    """Targets from a file's text, or a clear error naming what is wrong."""
    try:
        parsed = _TargetsFile.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise InvalidRequestError(f"{name} is not a valid targets file: {_first_error(exc)}") from None
    margins = {
        key: {category: share / sum(shares.values()) for category, share in shares.items()}
        for key, shares in parsed.margins.items()
    }
    return Targets(parsed.source, margins)


def load_targets(path: Path | None) -> Targets:
    """The operator's targets file, or the default GSS margins when none is set."""
    if path is None:
        return default_targets()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidRequestError(f"cannot read the weight targets file {path.name}: {exc.strerror}") from None
    return parse_targets(text, path.name)


@cache
def default_targets() -> Targets:
    """The GSS 2022 margins shipped with the bank (sex, age band, race, education, region)."""
    text = (
        resources.files("agentbank.publication.weighting").joinpath("default_margins.json").read_text(encoding="utf-8")
    )
    return parse_targets(text, "the default margins")


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        return f"{where}: {error['msg']}" if where else error["msg"]
    return str(exc)
