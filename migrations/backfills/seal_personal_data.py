"""Seal what an older bank kept in the clear: demographics, its agents' coded answers, report card scores,
the digests of recorded audio.

Each value is sealed with its participant's data key, read through the bank's keyring (the one the
settings name for this database). A participant who withdrew has no key: their plaintext is dropped,
which is what their withdrawal promised. A key whose key-encryption key cannot be found stops the
migration: the keyring is not where the settings say, and sealing must not silently lose anyone's data.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from agentbank.core.settings import Settings
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.runtime.bank import open_keyring

SCORE_COLUMNS = ("items", "accuracy", "self_consistency", "normalized_accuracy", "normalized_low",
                 "normalized_high", "baseline", "baseline_normalized")  # fmt: skip


def _ciphers(connection: Connection) -> Callable[[uuid.UUID], Cipher | None]:
    keys: KeyRing | None = None
    wrapped = {pid: key for pid, key in connection.execute(text("SELECT id, wrapped_key FROM participants"))}

    def cipher(participant_id: uuid.UUID) -> Cipher | None:
        nonlocal keys
        key = wrapped.get(participant_id)
        if key is None:
            return None  # withdrew: their data key is gone, and so goes their plaintext
        if keys is None:
            keys = open_keyring(Settings(), connection.engine.url.database)
        return keys.cipher(participant_id, bytes(key))

    return cipher


def seal_demographics(connection: Connection) -> None:
    """participants.demographics (JSONB) into participants.demographics_encrypted."""
    cipher = _ciphers(connection)
    rows = connection.execute(text("SELECT id, demographics FROM participants WHERE demographics::text <> '{}'"))
    for participant_id, demographics in rows.all():
        own = cipher(participant_id)
        sealed = own.seal_json(demographics) if own is not None else None
        update = text("UPDATE participants SET demographics_encrypted = :s WHERE id = :id")
        connection.execute(update, {"s": sealed, "id": participant_id})


def sealed_population_answers(connection: Connection) -> list[dict[str, Any]]:
    """The rows of population_answers (one per item, in the clear) as sealed rows, one per agent and
    instrument, to insert once the table has its new shape."""
    cipher = _ciphers(connection)
    rows = connection.execute(text(
        "SELECT a.participant_id, o.agent_id, o.instrument, o.item, o.code, o.value FROM population_answers o "
        "JOIN agents a ON a.id = o.agent_id"
    ))  # fmt: skip
    grouped: dict[tuple[uuid.UUID, uuid.UUID, str], dict[str, list[Any]]] = defaultdict(dict)
    for participant_id, agent_id, instrument, item, code, value in rows:
        grouped[(participant_id, agent_id, instrument)][item] = [code, value]
    sealed = []
    for (participant_id, agent_id, instrument), answers in grouped.items():
        own = cipher(participant_id)
        if own is not None:
            sealed.append({"agent_id": agent_id, "instrument": instrument, "answers_encrypted": own.seal_json(answers)})
    return sealed


def seal_embeddings(connection: Connection) -> None:
    """memories.embedding (a pgvector, in the clear) into memories.embedding_encrypted (float32, sealed)."""
    cipher = _ciphers(connection)
    rows = connection.execute(text(
        "SELECT m.id, a.participant_id, m.embedding::text FROM memories m JOIN agents a ON a.id = m.agent_id"
    ))  # fmt: skip
    for memory_id, participant_id, vector in rows.all():
        own = cipher(participant_id)
        if own is None:
            connection.execute(text("DELETE FROM memories WHERE id = :id"), {"id": memory_id})
            continue
        sealed = own.seal_bytes(np.asarray(json.loads(vector), dtype=np.float32).tobytes())
        connection.execute(
            text("UPDATE memories SET embedding_encrypted = :s WHERE id = :id"), {"s": sealed, "id": memory_id}
        )


def seal_report_cards(connection: Connection) -> None:
    """report_cards' score columns into report_cards.scores_encrypted (a card of a withdrawn person goes)."""
    cipher = _ciphers(connection)
    columns = ", ".join(f"c.{name}" for name in SCORE_COLUMNS)
    rows = connection.execute(text(
        f"SELECT c.id, a.participant_id, {columns} FROM report_cards c JOIN agents a ON a.id = c.agent_id"  # noqa: S608
    ))  # fmt: skip
    for card_id, participant_id, *values in rows.all():
        own = cipher(participant_id)
        if own is None:
            connection.execute(text("DELETE FROM report_cards WHERE id = :id"), {"id": card_id})
            continue
        scores = dict(zip(SCORE_COLUMNS, values, strict=True))
        connection.execute(
            text("UPDATE report_cards SET scores_encrypted = :s WHERE id = :id"),
            {"s": own.seal_json({**scores, "item_flags": {}}), "id": card_id},
        )


def key_audio_digests(connection: Connection, purpose: str) -> None:
    """audio_chunks.sha256 (a plain SHA-256 of the audio) keyed under each participant's data key, and
    audio_partials.chunks_sha256 recomputed from the keyed digests; a withdrawn person's audio goes."""
    cipher = _ciphers(connection)
    rows = connection.execute(text(
        "SELECT c.id, c.session_id, c.turn, c.seq, c.sha256, s.participant_id FROM audio_chunks c "
        "JOIN interview_sessions s ON s.id = c.session_id ORDER BY c.session_id, c.turn, c.seq"
    ))  # fmt: skip
    keyed: dict[tuple[uuid.UUID, int], list[str]] = defaultdict(list)
    for chunk_id, session_id, turn, _seq, digest, participant_id in rows.all():
        own = cipher(participant_id)
        if own is None:
            connection.execute(text("DELETE FROM audio_chunks WHERE id = :id"), {"id": chunk_id})
            continue
        kept = own.digest(purpose, digest)
        keyed[(session_id, turn)].append(kept)
        connection.execute(text("UPDATE audio_chunks SET sha256 = :d WHERE id = :id"), {"d": kept, "id": chunk_id})
    partials = connection.execute(text("SELECT id, session_id, turn, chunks FROM audio_partials")).all()
    for partial_id, session_id, turn, chunks in partials:
        digests = keyed.get((session_id, turn), [])
        if len(digests) < chunks:  # its audio is gone: a partial is only a head start, recomputed when needed
            connection.execute(text("DELETE FROM audio_partials WHERE id = :id"), {"id": partial_id})
            continue
        whole = hashlib.sha256("".join(digests[:chunks]).encode()).hexdigest()
        connection.execute(text("UPDATE audio_partials SET chunks_sha256 = :d WHERE id = :id"),
                           {"d": whole, "id": partial_id})  # fmt: skip


def plain_audio_digests(connection: Connection) -> None:
    """Back to 0022's plain digests, computed from the sealed audio itself; partials are recomputed when needed."""
    cipher = _ciphers(connection)
    rows = connection.execute(text(
        "SELECT c.id, c.data_encrypted, s.participant_id FROM audio_chunks c "
        "JOIN interview_sessions s ON s.id = c.session_id"
    ))  # fmt: skip
    for chunk_id, sealed, participant_id in rows.all():
        own = cipher(participant_id)
        if own is None:
            connection.execute(text("DELETE FROM audio_chunks WHERE id = :id"), {"id": chunk_id})
            continue
        digest = hashlib.sha256(own.open_bytes(bytes(sealed))).hexdigest()
        connection.execute(text("UPDATE audio_chunks SET sha256 = :d WHERE id = :id"), {"d": digest, "id": chunk_id})
    connection.execute(text("DELETE FROM audio_partials"))
