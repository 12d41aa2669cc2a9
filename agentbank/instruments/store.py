"""Instruments in the database: each content version stored once, items looked up by content."""

from __future__ import annotations

import threading

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.db.models import InstrumentRecord, ItemRecord
from agentbank.instruments.model import Instrument, Item

# The instrument records a session created and has not committed yet (see ``SyncedInstruments``).
_CREATED = "agentbank.instruments.created"


class SyncedInstruments:
    """Item ids by key of the instrument versions one process has synced: each version once, not on every
    plan. A version's content never changes, so neither do its rows once committed.

    Keyed by the instrument itself: equal instruments have equal content, so equal versions, and the hash
    of the value is far cheaper than its version (a hash of every item's). Ids are kept only once they are
    committed, seen by another transaction: a version this process created stays unkept until a later
    sync finds it stored, so a rolled-back creation never leaves ids that name nothing.
    """

    def __init__(self) -> None:
        self._ids: dict[Instrument, dict[str, int]] = {}
        self._lock = threading.Lock()

    def item_ids(self, session: Session, instrument: Instrument) -> dict[str, int]:
        """The item ids of ``instrument``'s version, stored the first time (``sync_instrument``)."""
        with self._lock:
            known = self._ids.get(instrument)
        if known is not None:
            return known
        ids = sync_instrument(session, instrument)
        if not _created_here(session, instrument):
            with self._lock:
                self._ids[instrument] = ids
        return ids


def _created_here(session: Session, instrument: Instrument) -> bool:
    return instrument in session.info.get(_CREATED, ())


def sync_instrument(session: Session, instrument: Instrument) -> dict[str, int]:
    """Store this instrument version with its items the first time; return item ids by key.

    Safe when several workers plan the first answers to a new version at once: the first insert wins,
    the others wait for it on the unique key and then read its items."""
    version = instrument.version  # a hash of every item's: computed once
    created = session.execute(
        insert(InstrumentRecord)
        .values(
            key=instrument.key,
            version=version,
            title=instrument.title,
            preamble=instrument.preamble,
            source=instrument.source,
        )
        .on_conflict_do_nothing(index_elements=["key", "version"])
        .returning(InstrumentRecord.id)
    ).scalar()
    if created is not None:
        session.add_all(_item_record(created, item) for item in instrument.items)
        session.flush()
        session.info.setdefault(_CREATED, set()).add(instrument)
    record_id = session.scalar(
        select(InstrumentRecord.id).where(InstrumentRecord.key == instrument.key, InstrumentRecord.version == version)
    )
    rows = session.execute(select(ItemRecord.key, ItemRecord.id).where(ItemRecord.instrument_id == record_id))
    return {key: item_id for key, item_id in rows}


def _item_record(instrument_id: int, item: Item) -> ItemRecord:
    return ItemRecord(
        instrument_id=instrument_id,
        key=item.key,
        version=item.version,
        kind=item.kind,
        question=item.question,
        options=[{"code": o.code, "label": o.label} for o in item.options],
        minimum=item.minimum,
        maximum=item.maximum,
        meta=item.meta,
    )
