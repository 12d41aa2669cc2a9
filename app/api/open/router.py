"""The open tier: distributions of fixed-instrument items over the population, protected by each release."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Annotated, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from fastapi import APIRouter, Header, Query
from starlette.responses import Response

from agentbank.access.principals import AGGREGATE_READ
from agentbank.errors import NotFoundError
from agentbank.instruments import Instrument, load_instrument
from agentbank.instruments.files import ENCODINGS, FileFormat, encode
from agentbank.open_tier.breakdowns import BREAKDOWNS, FIGURES
from agentbank.open_tier.distributions import Distribution
from agentbank.open_tier.fidelity import item_fidelity
from agentbank.open_tier.labelled import labelled_table, table_rows
from agentbank.open_tier.releases import begin_read, items_in_release, open_table
from agentbank.open_tier.validity import item_measure
from app.api.deps import PrincipalDep, SessionDep, SettingsDep, actor, require
from app.api.open.reads import CACHE_CONTROL, READS, Encoded, ReadKey, ReadRequest
from app.api.open.schemas import BreakdownRead, DistributionRead, InstrumentRead, ItemRead

router = APIRouter(prefix="/v1/open", tags=["open tier"], dependencies=[require(AGGREGATE_READ)])

PARQUET = "application/vnd.apache.parquet"
# The instruments whose answers the population job precomputes; BFI-44 stays out (its licence).
OPEN_INSTRUMENTS = ("gss", "ipip50", "games")


def _instrument(key: str, settings: SettingsDep) -> Instrument:
    if key not in OPEN_INSTRUMENTS:
        raise NotFoundError(f"no open instrument {key!r}")
    return load_instrument(key, settings.reference_data_dir)


@router.get("/instruments", response_model=list[InstrumentRead])
def instruments(session: SessionDep, settings: SettingsDep) -> list[InstrumentRead]:
    """The fixed instruments of the open tier, each with the items the current release holds tables for."""
    loaded = [_instrument(key, settings) for key in OPEN_INSTRUMENTS]
    return [InstrumentRead(key=i.key, title=i.title, version=i.version, items=len(i.items),
                           released=items_in_release(session, i.key)) for i in loaded]  # fmt: skip


@router.get("/breakdowns", response_model=list[BreakdownRead])
def breakdowns() -> list[BreakdownRead]:
    """The ways a table can be broken down, with their categories."""
    return [BreakdownRead(key=b.key, title=b.title, categories=list(b.categories)) for b in BREAKDOWNS.values()]


@router.get("/instruments/{instrument}/items", response_model=list[ItemRead])
def items(instrument: str, settings: SettingsDep) -> list[ItemRead]:
    """The items of an instrument, with their codes."""
    return [
        ItemRead(
            key=i.key, question=i.question, kind=i.kind, options=[{"code": o.code, "label": o.label} for o in i.options]
        )
        for i in _instrument(instrument, settings).items
    ]


@router.get(
    "/instruments/{instrument}/items/{item}/distribution",
    response_model=DistributionRead,
    responses={
        200: {"content": {e.media_type: {} for e in ENCODINGS.values()}},
        304: {"description": "Not modified (ETag)"},
    },
)
def item_distribution(
    instrument: str,
    item: str,
    session: SessionDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    breakdowns: Annotated[
        str, Query(max_length=40, description=f"Up to two, comma-separated, of: {', '.join(BREAKDOWNS)}")
    ] = "",
    format: Annotated[
        Literal["json", "csv", "parquet", "dta", "sav"],
        Query(description="json, csv, parquet, or with value and variable labels Stata `dta` or SPSS `sav`"),
    ] = "json",
    if_none_match: Annotated[str | None, Header(max_length=400)] = None,
) -> Response:
    """Counts and shares per answer code of the current release, overall or by one or two breakdowns.

    Every count carries the release's noise (differential privacy, stated in `protection`), and every
    interval includes it; a group of fewer than k people, noise included, is hidden whole. A release never
    changes: the response has a strong `ETag`, and a request that sends it back in `If-None-Match` gets
    `304 Not Modified` (each read is audited all the same).
    """
    loaded = _instrument(instrument, settings)
    chosen = [b.strip() for b in breakdowns.split(",") if b.strip()]
    release, item_key, dims = begin_read(session, actor(principal), loaded, item, chosen, format)
    key = ReadKey(release.id, release.state_digest, loaded.key, item_key, dims, format)
    headers = {"ETag": key.etag, "Cache-Control": CACHE_CONTROL, "X-Release": str(key.release)}
    # The body is built before a 304 too, once per process: that it can be built says the release holds
    # the table (a validator sent back is the client's word, not proof), and a kept body says so for free.
    encoded = READS.get(key)
    if encoded is None:
        encoded = _encode(session, settings, loaded, item, chosen, format, key.release)
        READS.put(key, encoded)
    READS.served(ReadRequest(instrument, item, breakdowns, format), key)  # the next such read is kept (kept.py)
    if key.matches(if_none_match):
        return Response(status_code=304, headers=headers)
    return Response(encoded.body, media_type=encoded.media_type, headers=headers)


def _encode(
    session: SessionDep, settings: SettingsDep, loaded: Instrument, item: str, chosen: list[str], format: str,
    release: int,
) -> Encoded:  # fmt: skip
    """The read's body, built from the stored table of the release the read chose (never a newer one
    committed meanwhile, which would be kept under this release's ETag) and encoded once."""
    result = open_table(session, loaded, item, chosen, release)
    if format == "csv":
        return Encoded(_csv(result).encode(), "text/csv; charset=utf-8")
    if format == "parquet":
        return Encoded(_parquet(result), PARQUET)
    if format in (FileFormat.DTA, FileFormat.SAV):
        return Encoded(*encode(labelled_table(result), FileFormat(format)))
    measure = item_measure(session, loaded, item, release)
    validity = {**asdict(measure), "below_baseline": measure.below_baseline}
    overall = result if not result.breakdowns else open_table(session, loaded, item, [], release)
    fidelity = item_fidelity(overall, settings.reference_data_dir)
    body = DistributionRead.model_validate({**asdict(result), "validity": validity, "fidelity": fidelity})
    return Encoded(body.model_dump_json().encode(), "application/json")


def _csv(result: Distribution) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*result.breakdowns, "code", "label", *FIGURES])
    writer.writerows([[_blank(v) for v in row] for row in table_rows(result)])
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


def _blank(value: object) -> object:
    return "" if value is None else value
