"""A release's table in every format the open tier offers, encoded once, when the release is published.

JSON carries the table with its item's validity and fidelity; CSV and Parquet the table's rows (a hidden
count or share is empty, never a zero); Stata ``.dta`` and SPSS ``.sav`` the same rows with value and
variable labels. The bytes are a function of the release and the table alone, never of who reads them.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy.orm import Session

from agentbank.instruments.exports import FileFormat, encode
from agentbank.instruments.model import Instrument
from agentbank.publication.breakdowns import FIGURES
from agentbank.publication.distributions import Distribution
from agentbank.publication.fidelity import item_fidelity
from agentbank.publication.labelled import labelled_table, table_rows
from agentbank.publication.validity import item_measure

FORMATS = ("json", "csv", "parquet", "dta", "sav")
MEDIA_TYPES = {"json": "application/json", "csv": "text/csv; charset=utf-8",
               "parquet": "application/vnd.apache.parquet", "dta": "application/x-stata-dta",
               "sav": "application/x-spss-sav"}  # fmt: skip


@dataclass(frozen=True)
class Encoded:
    body: bytes
    media_type: str


def item_figures(
    session: Session, instrument: Instrument, overall: Distribution, reference_dir: Path
) -> dict[str, Any]:
    """What a JSON table carries of its item beside its cells, the same for every table of the item (so it is
    worked out once per item): the item's measured validity and its distance from the GSS's own distribution."""
    measure = item_measure(session, instrument, overall.item, overall.release)
    return {"validity": {**asdict(measure), "below_baseline": measure.below_baseline},
            "fidelity": item_fidelity(overall, reference_dir)}  # fmt: skip


def encoded(result: Distribution, fmt: str, figures: dict[str, Any]) -> Encoded:
    """``result`` (a table of one release) as ``fmt``'s bytes; ``figures``: its item's (``item_figures``)."""
    if fmt == "csv":
        return Encoded(_csv(result).encode(), MEDIA_TYPES["csv"])
    if fmt == "parquet":
        return Encoded(_parquet(result), MEDIA_TYPES["parquet"])
    if fmt in (FileFormat.DTA, FileFormat.SAV):
        return Encoded(*encode(labelled_table(result), FileFormat(fmt)))
    body = {**asdict(result), **figures}
    return Encoded(json.dumps(body, separators=(",", ":"), default=str).encode(), MEDIA_TYPES["json"])


def _csv(result: Distribution) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*result.breakdowns, "code", "label", *FIGURES])
    writer.writerows([["" if v is None else v for v in row] for row in table_rows(result)])
    return out.getvalue()


def _parquet(result: Distribution) -> bytes:
    """The CSV's table with typed columns: a suppressed count or share is null, never a zero."""
    names = [*result.breakdowns, "code", "label", *FIGURES]
    types = [*(pa.string() for _ in result.breakdowns), pa.int64(), pa.string(), pa.int64(),
             *(pa.float64() for _ in FIGURES[1:])]  # fmt: skip
    rows = table_rows(result)
    columns = {name: [row[i] for row in rows] for i, name in enumerate(names)}
    out = io.BytesIO()
    pq.write_table(pa.table(columns, schema=pa.schema(list(zip(names, types, strict=True)))), out)
    return out.getvalue()
