"""The services an interview runs with besides the database: the participant's keys, the interviewer's
model, a transcriber, the time, and what hearing keeps in this process (the recordings being decoded and
the threads its models run on).

The application builds the process's share once, at its start (``app.api.interviews.dependencies``), and
every request's ``Services`` carries the same streams and pool; a test or the terminal interview that
builds its own gets its own. Each room types what it uses by a protocol of its own (``SessionServices``,
``DecidingServices``, ``HearingServices``), so none of them imports this module, which lies above them all.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import ChatModel
from interviewer.deciding.reflecting import Summaries
from interviewer.hearing.frames import ChunkStreams
from interviewer.hearing.ports import Transcriber

# The end-of-turn model and Whisper each run one call per recording at a time; two threads keep both going.
LISTENING_THREADS = 2


def listening_pool() -> ThreadPoolExecutor:
    """The threads hearing's model calls run on, beside the requests (``hearing.listening``)."""
    return ThreadPoolExecutor(max_workers=LISTENING_THREADS, thread_name_prefix="listening")


@dataclass
class Services:
    """What interviews need besides the database."""

    keys: KeyRing
    chat: ChatModel
    transcriber: Transcriber | None = None
    # A partial of the C function: reading the time runs no code of ours.
    clock: Callable[[], datetime] = field(default=partial(datetime.now, UTC))
    # Recordings being decoded, by (interview, turn, take): a cache, never the record.
    streams: ChunkStreams = field(default_factory=ChunkStreams)
    pool: Executor = field(default_factory=listening_pool)
    # Who writes what is told back at the end of a module (``AGENTBANK_INTERVIEWER_SUMMARIES``).
    summaries: Summaries = Summaries.MODEL
