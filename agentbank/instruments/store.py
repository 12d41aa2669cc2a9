"""Instruments in the database: each content version stored once, items looked up by content."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.instruments.model import Instrument, Item
from agentbank.models import InstrumentRecord, ItemRecord


def sync_instrument(session: Session, instrument: Instrument) -> dict[str, int]:
    """Store this instrument version with its items the first time; return item ids by key."""
    record = session.scalars(
        select(InstrumentRecord).where(
            InstrumentRecord.key == instrument.key, InstrumentRecord.version == instrument.version
        )
    ).first()
    if record is None:
        record = InstrumentRecord(
            key=instrument.key,
            version=instrument.version,
            title=instrument.title,
            preamble=instrument.preamble,
            source=instrument.source,
        )
        session.add(record)
        session.flush()
        session.add_all(_item_record(record.id, item) for item in instrument.items)
        session.flush()
    rows = session.execute(select(ItemRecord.key, ItemRecord.id).where(ItemRecord.instrument_id == record.id))
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
