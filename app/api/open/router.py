"""The open tier: distributions of fixed-instrument items over the population, protected by each release."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Request
from starlette.responses import Response

from agentbank.access.principals import AGGREGATE_READ
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.instruments import Instrument, load_instrument
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.formats import MEDIA_TYPES
from agentbank.publication.privacy import ASKED_PER_ITEM, expected_share_error
from agentbank.publication.releases import NO_RELEASE_YET, NoReleaseError, next_cut_after, table_request
from agentbank.publication.workload import ask
from agentbank.runtime.demo_settings import release_policy
from app.api.deps import PrincipalDep, SessionDep, SettingsDep, require
from app.api.open.files import OpenReads, file_response
from app.api.open.schemas import (
    BreakdownRead,
    DistributionRead,
    ExpectedErrorsRead,
    InstrumentRead,
    ItemRead,
    KindOfTableRead,
    TableKind,
    TableQueuedRead,
    TokenCheckRead,
)  # fmt: skip

router = APIRouter(prefix="/v1/open", tags=["open tier"], dependencies=[require(AGGREGATE_READ)])

GROUP_SIZES = (50, 100, 250, 500, 1000)
RETRY_AFTER_S = 3600  # a queued table waits for the next cut: ask again in an hour, not at once
# The instruments whose answers the population job precomputes; BFI-44 stays out (its licence).
OPEN_INSTRUMENTS = ("gss", "ipip50", "games")


def _instrument(key: str, settings: SettingsDep) -> Instrument:
    if key not in OPEN_INSTRUMENTS:
        raise NotFoundError(f"no open instrument {key!r}")
    return load_instrument(key, settings.reference_data_dir)


@router.get("/instruments", response_model=list[InstrumentRead])
def instruments(request: Request, settings: SettingsDep) -> list[InstrumentRead]:
    """The fixed instruments of the open tier, each with the items the current (published) release holds."""
    loaded = [_instrument(key, settings) for key in OPEN_INSTRUMENTS]
    manifest = request.app.state.open_reads.published.current()
    return [InstrumentRead(key=i.key, title=i.title, version=i.version, items=len(i.items),
                           released=manifest.items(i.key) if manifest else []) for i in loaded]  # fmt: skip


@router.get("/token", response_model=TokenCheckRead)
def token_check(principal: PrincipalDep, response: Response) -> TokenCheckRead:
    """Whether the caller's token may read the open tier (a file server in front of the shelf asks this, and
    keeps the answer for a stated short time; `deploy/host/topology.sh` keeps it 30 s). The client's id is in
    `X-Client-Id`, for the server's access log."""
    response.headers["X-Client-Id"] = principal.id
    return TokenCheckRead(client=principal.id)


@router.get("/expected-errors", response_model=ExpectedErrorsRead)
def expected_errors(request: Request) -> ExpectedErrorsRead:
    """How wrong a share of the current release may be, by kind of table and group size, before a table is
    read or asked for: the noise of each kind, as the release's privacy ledger states it."""
    reads: OpenReads = request.app.state.open_reads
    manifest = reads.published.current()
    if manifest is None:
        raise NoReleaseError(NO_RELEASE_YET)
    privacy = manifest.content["privacy"]
    scales, standing = privacy["scales"], privacy.get("standing") or []

    def kind(name: TableKind, tables: str, every: bool, sigma: float) -> KindOfTableRead:
        errors = {str(n): round(expected_share_error(sigma, n), 2) for n in GROUP_SIZES}
        return KindOfTableRead(kind=name, tables=tables, in_every_release=every, sigma=sigma,
                               expected_error_points=errors)  # fmt: skip

    return ExpectedErrorsRead(
        release=manifest.release, mu=manifest.content["mu"], standing=standing, asked_per_item=ASKED_PER_ITEM,
        kinds=[kind("overall", "every item, overall", True, scales["overall"]),
               kind("standing one-way", f"every item, by one of {', '.join(standing)}", True, scales["one_way"]),
               kind("asked", "a pair of breakdowns, or one not standing: measured at the next cut once asked",
                    False, scales["asked"])],
        note="the noise alone, for a share near one half; sampling adds its own error (each share's "
        "sampling_interval). A table not in the release costs a researcher one cut's wait, not more noise.",
    )  # fmt: skip


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
        200: {"content": {media: {} for media in MEDIA_TYPES.values()}},
        202: {"model": TableQueuedRead, "description": "The release lacks this table: it is measured at the next cut"},
        304: {"description": "Not modified (ETag)"},
    },
)
def item_distribution(
    instrument: str,
    item: str,
    request: Request,
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
    interval includes it; a group of fewer than k people, noise included, is hidden whole. A release is a
    publication: the body is its published file (`Content-Location` names it by its digest, forever), with a
    strong `ETag`; `If-None-Match` gets `304 Not Modified`. A read is counted in the caller's access log and
    uses no agent. A table the release lacks (a pair of breakdowns, or one that is not standing) answers
    `202 Accepted`: it is queued, measured at the next cut and then published to everyone.
    """
    loaded = _instrument(instrument, settings)
    chosen = [b.strip() for b in breakdowns.split(",") if b.strip()]
    item_key, dims = table_request(loaded, item, chosen)
    reads: OpenReads = request.app.state.open_reads
    manifest = reads.published.current()
    if manifest is None:
        raise NoReleaseError(NO_RELEASE_YET)
    entry = manifest.entry(loaded.key, item_key, dims, format)
    if entry is not None:
        response = file_response(reads.published, manifest.release, entry, if_none_match, by_digest=False)
        reads.counts.count(principal.id, not_modified=response.status_code == 304)
        return response
    later = [d for d in dims if d not in manifest.content["dimensions"]]
    if later:
        raise InvalidRequestError(
            f"release {manifest.release} was cut before the breakdown {later[0]!r} existed; it shows from the next "
            "release on"
        )
    if manifest.entry(loaded.key, item_key, (), format) is None:
        raise NotFoundError(f"no agent of release {manifest.release} answered {loaded.key}/{item_key}")
    asked = ask(session, loaded.key, item_key, dims)
    body = TableQueuedRead(
        instrument=loaded.key, item=item_key, breakdowns=list(dims), release=manifest.release, asks=asked.asks,
        next_cut_after=next_cut_after(session, release_policy(session, settings)),
        note="this table is not in the current release: it is measured at the next cut, from that cut's members, "
        "with the budget each release keeps for tables researchers ask for, and then published to everyone",
    )  # fmt: skip
    return Response(body.model_dump_json(), status_code=202, media_type="application/json",
                    headers={"Retry-After": str(RETRY_AFTER_S)})  # fmt: skip


@router.get(
    "/files/{name}",
    responses={200: {"content": {media: {} for media in MEDIA_TYPES.values()}}, 304: {"description": "Not modified"}},
)
def published_file(
    name: Annotated[str, Path(pattern=r"^[0-9a-f]{64}\.(json|csv|parquet|dta|sav)$")],
    request: Request,
    principal: PrincipalDep,
    if_none_match: Annotated[str | None, Header(max_length=400)] = None,
) -> Response:
    """A file of the current release named by its digest (a distribution's `Content-Location`): immutable, so
    it may be kept forever. A file of a release no longer in force answers 404."""
    reads: OpenReads = request.app.state.open_reads
    manifest = reads.published.current()
    digest, _, fmt = name.partition(".")
    entry = None if manifest is None else manifest.holds(digest, fmt)
    if manifest is None or entry is None:
        raise NotFoundError("no file of the current release has this name")
    response = file_response(reads.published, manifest.release, entry, if_none_match, by_digest=True)
    reads.counts.count(principal.id, not_modified=response.status_code == 304)
    return response
