"""Building an agent from a final transcript, with no transaction open during the model calls.

A build reads (a short transaction: the transcript, opened and chunked), makes (no transaction: the
embeddings, the four experts' reflections, the persona) and stores (a short transaction: the new agent
version and its memory). A claim held on a connection of its own, outside any transaction, keeps two
builders from building the same person.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from sqlalchemy import Engine, func, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from agentbank.building import deny_list
from agentbank.building.agents import BuildConfig, pending_query
from agentbank.building.memory import Chunk, chunk_turns, seal_vector
from agentbank.building.reflection import EXPERTS, complete_structured, reflect, select_windows
from agentbank.building.transcripts import TurnText, latest_final_transcript, load_turns
from agentbank.building.validity.measures import has_retest, request_refresh
from agentbank.core.errors import AgentBankError
from agentbank.core.prompts.files import prompt
from agentbank.core.statuses import AgentStatus, ConsentStatus, sources
from agentbank.db import transaction
from agentbank.db.models import Agent, Memory, Participant
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.providers.chat import ChatModel, Message, Usage
from agentbank.providers.embeddings import Embedder
from agentbank.providers.in_flight import InFlight

PERSONA_SCHEMA = {
    "type": "object",
    "properties": {"persona": {"type": "string", "minLength": 20, "maxLength": 600}},
    "required": ["persona"],
    "additionalProperties": False,
}

# Any constant works; it names the class of per-participant build claims among advisory locks.
BUILD_CLAIM = 0x6275696C  # "buil"
_CLAIM = text("SELECT pg_try_advisory_lock(:claims, hashtext(:participant))")
_UNCLAIM = text("SELECT pg_advisory_unlock(:claims, hashtext(:participant))")


@contextmanager
def build_claim(sessions: sessionmaker[Session], participant_id: uuid.UUID) -> Iterator[bool]:
    """Claim a participant's build for as long as the block runs; False when another builder holds it.

    Any number of build processes share the pending list and nobody is built twice. The claim is an
    advisory lock of a connection of its own, held with no transaction open (the build's model calls
    run outside any transaction); a builder that crashes loses its connection, and the claim with it.
    """
    bind = sessions.kw["bind"]
    owned = isinstance(bind, Engine)
    conn = bind.connect() if isinstance(bind, Engine) else bind
    names = {"claims": BUILD_CLAIM, "participant": str(participant_id)}
    held = False
    try:
        held = bool(conn.scalar(_CLAIM, names))
        if owned:
            conn.commit()  # the lock belongs to the connection, not to a transaction
        yield held
    finally:
        if held:
            conn.scalar(_UNCLAIM, names)
            if owned:
                conn.commit()
        if owned:
            conn.close()


@dataclass(frozen=True)
class BuildSource:
    """What a build reads from the database: the transcript's turns and chunks, opened in memory."""

    participant_id: uuid.UUID
    transcript_id: uuid.UUID
    cipher: Cipher
    turns: list[TurnText]
    chunks: list[Chunk]


@dataclass(frozen=True)
class BuildWork:
    """What a build's models made: embeddings, the experts' notes and the persona."""

    chunk_vectors: Any
    reflections: list[tuple[str, str]]
    note_vectors: Any
    persona: str
    usage: Usage


def build_now(
    sessions: sessionmaker[Session],
    participant_id: uuid.UUID,
    *,
    chat: ChatModel,
    embedder: Embedder,
    keys: KeyRing,
    config: BuildConfig,
    on_step: Callable[[str], None] = lambda _step: None,
    in_flight: InFlight | None = None,
) -> Agent | None:
    """Build the participant's agent with no transaction open during the model calls: read, make,
    store (each step its own). None when it is not the caller's to build: another builder has it, it
    is built already, or the participant withdrew (before or during the build). Its independent model calls
    (the experts' reflections) run within ``in_flight``, the process's calls in flight."""
    with build_claim(sessions, participant_id) as mine:
        if not mine:
            return None
        with transaction(sessions) as session:
            if not _still_pending(session, participant_id, config):
                return None
            source = read_build(session, session.get_one(Participant, participant_id), keys, config)
        work = make_build(source, chat=chat, embedder=embedder, config=config, on_step=on_step, in_flight=in_flight)
        with transaction(sessions) as session:
            # Held to the commit: a withdrawal waits for the agent and then removes it, or comes first.
            participant = session.get_one(Participant, participant_id, with_for_update=True)
            if participant.consent != ConsentStatus.CONSENTED or participant.wrapped_key is None:
                return None
            return store_build(session, source, work, config)


def _still_pending(session: Session, participant_id: uuid.UUID, config: BuildConfig) -> bool:
    query = pending_query(config).where(Participant.id == participant_id).with_only_columns(Participant.id)
    return session.scalar(query) is not None


def build_agent(
    session: Session,
    participant: Participant,
    *,
    chat: ChatModel,
    embedder: Embedder,
    keys: KeyRing,
    config: BuildConfig,
    on_step: Callable[[str], None] = lambda _step: None,
) -> Agent:
    """A whole build in the caller's session, model calls included: for tests and benchmarks that own
    one session. The bank's commands and workers build with ``build_now``, outside transactions."""
    source = read_build(session, participant, keys, config)
    return store_build(session, source, make_build(source, chat=chat, embedder=embedder, config=config,
                                                   on_step=on_step), config)  # fmt: skip


def read_build(session: Session, participant: Participant, keys: KeyRing, config: BuildConfig) -> BuildSource:
    """The participant's newest final transcript, opened and chunked for a build."""
    transcript = latest_final_transcript(session, participant.id)
    if transcript is None:
        raise AgentBankError(f"participant {participant.pseudonym} has no final transcript")
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    turns = load_turns(session, transcript.id, cipher)
    return BuildSource(participant.id, transcript.id, cipher, turns, chunk_turns(turns, config.chunk_words))


def make_build(
    source: BuildSource, *, chat: ChatModel, embedder: Embedder, config: BuildConfig,
    on_step: Callable[[str], None] = lambda _step: None, in_flight: InFlight | None = None,
) -> BuildWork:  # fmt: skip
    """The build's model work (no database): embeddings, the four experts' reflections, the persona."""
    on_step("embedding the transcript")
    chunk_vectors = embedder.embed([c.text for c in source.chunks])
    notes, usage = reflect(
        chat,
        select_windows(source.chunks, config.reflection_word_budget),
        max_tokens=config.reflection_max_tokens,
        on_step=on_step,
        in_flight=in_flight,
    )
    on_step("persona")
    messages: list[Message] = [
        {"role": "system", "content": _notes_block(notes)},
        {"role": "user", "content": prompt("persona")},
    ]
    # Through the process's calls in flight too, so builds at once never exceed them.
    (persona_result,) = (in_flight or InFlight()).run_all(
        [partial(complete_structured, chat, messages, PERSONA_SCHEMA, max_tokens=600, seed=0)]
    )
    usage += persona_result.usage
    reflections = [(key, note) for key, values in notes.items() for note in values]
    note_vectors = embedder.embed([note for _, note in reflections])
    return BuildWork(chunk_vectors, reflections, note_vectors, persona_result.data["persona"], usage)


def store_build(session: Session, source: BuildSource, work: BuildWork, config: BuildConfig) -> Agent:
    """A new active agent version from a build's work; earlier versions become ``superseded``."""
    participant_id, cipher = source.participant_id, source.cipher
    version = (session.scalar(select(func.max(Agent.version)).where(Agent.participant_id == participant_id)) or 0) + 1
    session.execute(
        update(Agent)
        .where(Agent.participant_id == participant_id, Agent.status.in_(sources(AgentStatus.SUPERSEDED)))
        .values(status=AgentStatus.SUPERSEDED)
    )
    agent = Agent(
        id=uuid.uuid4(),
        participant_id=participant_id,
        version=version,
        transcript_id=source.transcript_id,
        status=AgentStatus.ACTIVE,
        build={**asdict(config), "fingerprint": config.fingerprint, "usage": asdict(work.usage)},
        persona_encrypted=cipher.seal(work.persona),
        # Names the participant mentioned: individual answers that repeat them go to a reviewer.
        deny_list_encrypted=deny_list.seal(
            cipher, deny_list.extract_entities(t.text for t in source.turns if t.speaker == "participant")
        ),
    )
    session.add(agent)
    session.flush()
    if has_retest(session, participant_id):  # a rebuilt agent gets a fresh card
        request_refresh(session, "rebuild")
    session.add_all(
        Memory(
            agent_id=agent.id,
            kind="chunk",
            position=n,
            first_turn=chunk.first_turn,
            last_turn=chunk.last_turn,
            word_count=chunk.words,
            text_encrypted=cipher.seal(chunk.text),
            embedding_encrypted=seal_vector(cipher, vector),
        )
        for n, (chunk, vector) in enumerate(zip(source.chunks, work.chunk_vectors, strict=True))
    )
    session.add_all(
        Memory(
            agent_id=agent.id,
            kind="reflection",
            expert=expert,
            position=n,
            word_count=len(note.split()),
            text_encrypted=cipher.seal(note),
            embedding_encrypted=seal_vector(cipher, vector),
        )
        for n, ((expert, note), vector) in enumerate(zip(work.reflections, work.note_vectors, strict=True))
    )
    session.flush()
    return agent


def _notes_block(notes: dict[str, list[str]]) -> str:
    titles = {e.key: e.title for e in EXPERTS}
    parts = [f"## Notes by {titles[key]}\n" + "\n".join(f"- {n}" for n in values) for key, values in notes.items()]
    return "\n\n".join(parts)
