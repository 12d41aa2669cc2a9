"""Instruments in the database: each content version stored once, items looked up by content."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.db.models import InstrumentRecord, ItemRecord
from agentbank.instruments.model import Instrument, Item


def sync_instrument(session: Session, instrument: Instrument) -> dict[str, int]:
    """Store this instrument version with its items the first time; return item ids by key.

    Safe when several workers plan the first answers to a new version at once: the first insert wins,
    the others wait for it on the unique key and then read its items."""
    created = session.execute(
        insert(InstrumentRecord)
        .values(
            key=instrument.key,
            version=instrument.version,
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
    record_id = session.scalar(
        select(InstrumentRecord.id).where(
            InstrumentRecord.key == instrument.key, InstrumentRecord.version == instrument.version
        )
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
