"""How long a participant waits after speaking: from the end of their speech to the interviewer's next
question, as text and as its first audio, for answers of 5, 20 and 60 seconds; and how often the end of
turn cuts in on a pause inside a sentence, over the corpus of answers the bank makes itself.

The server's own functions run in this process against a real (embedded) database, each call in its
own transaction as the API makes it: the answer (Piper speech, encoded as Chromium's MediaRecorder
encodes it, Opus in WebM, cut into frames of 100 ms as the page sends them) arrives at the pace it is
spoken; each frame is received by the turn's owner, stored and heard for the end of the turn (``receive_chunk``,
what ``PUT .../chunks/{seq}`` does: Silero VAD, and the words at each pause judged);
once the turn has ended, the turn (``InterviewTurn.answer_spoken``, what ``POST .../turns/{turn}/end``
does) transcribes what is left, lets the interviewer decide with the embedded chat model (or takes the
decision started at the first finished pause) and stores the reply; then Piper synthesizes the reply's
first sentence. Each answer is the second turn of a new interview, after a typed first answer, and it
answers one of two kinds of question (``Asked``): the shipped script's first question or a follow-up under it,
which leaves time for a story, so that a finished thought waits ``end_of_turn_story_finished_s``; or, in an
interview of the shipped script's questions that ask for a short answer, one of those, where a finished thought
waits ``end_of_turn_finished_s`` and a sure voice ``end_of_turn_sure_s``. Both kinds are timed in one run, the
answers taking turns, and reported apart: what a quick turn means differs between them.

Clocks: end of speech to end of turn (the moment the server tells the page the participant has finished:
the silence a finished thought waits for, ``end_of_turn_sure_s`` when the voice sounds finished, otherwise
``end_of_turn_finished_s`` when the words do), end of turn to the next question's text and to its first
audio, and end of speech to that audio, what the participant waits for. The chat model's seconds and tokens
(prompt, served from the prefix cache, generated) are shown apart, as is the load average: other work on
the machine slows every figure.

The corpus (``voice_corpus``: answers with a pause of 0.5 to 2.5 s after a filler, a conjunction or a
sentence without its end, in a quiet room, by a fan and by a keyboard, and the JFK clip) runs through the
same end of turn; its cut-in rate (turns ended inside a sentence) and missed-end rate (turns that waited
more than 2 s after the last word) are reported with end of speech to end of turn; beside them, how often an
answer that goes on after a finished sentence (``voice_corpus.going_on``) was ended between its sentences,
after a short question and after one that leaves time for a story.
The lines before the last give end of speech to the end of the turn for each kind of question, against the goal
(p50 at most 0.8 s, p95 at most 1.5 s), and end of speech to the next question's first audio after each kind.
The last counts **cut-offs** as LiveKit's end-of-turn benchmark does: every ending of a turn while the person
meant to go on, inside a sentence or between two, over the corpus's answers (each goes on after its pause) after
each kind of question; beside it, end of speech to the next question over all the timed answers. A likely end
only makes a sound of listening; the turn passes after ``end_of_turn_patience_s`` (``turn_end``). The first
audio is the acknowledgement ("Thank you."), which the page plays from its cache the moment the server tells
it the turn has ended (the spoken browser test measures that gap: about nothing), so it is timed as the end
of the turn; the next question's first audio is given on the line before.

Run: python -m benchmarks.bench_voice [--fast] [--lengths 20] [--quick] [--chat-latency 0.8] [--pieces joined]
(--fast sends the frames without waiting in real time; --quick times a few 5 s answers of each kind, in real
time, and the corpus in one room, within a few minutes; --lengths the answers after a story question, with
``SHORT_ANSWERS`` of 5 s after short ones; --chat-latency decides with a local endpoint of that
fixed latency instead of the embedded model; --pieces joined makes the corpus's pauses by joining
pieces spoken apart; only the default run, or --quick, is saved.) The settings come from the environment
as the server's do: AGENTBANK_END_OF_TURN_VOICE=none times the words alone, without Smart Turn.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from agentbank.audit import log as audit
from agentbank.building.transcripts import load_turns
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import InterviewSession
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from agentbank.providers.factory import build_chat_model
from benchmarks import latency_server, voice_corpus
from benchmarks.bench_speech import spoken_answer, word_error_rate
from benchmarks.common import free_port, save
from interviewer.deciding import notes
from interviewer.deciding.reflecting import Summaries
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.hearing.transcription import SAMPLE_RATE, WhisperTranscriber
from interviewer.hearing.turn_end import TurnTaking
from interviewer.services import Services
from interviewer.session import interviews, invitations
from interviewer.session.script import Script, load_script
from interviewer.speaking.cache import SpeechCache, scripted_sentences
from interviewer.speaking.speech import PiperSpeaker, split_sentences
from interviewer.turns import InterviewTurn
from migrations.runner import alembic_config, upgrade


class Asked(StrEnum):
    """What the question an answer is timed after asks for (``TurnTaking.for_question``)."""

    STORY = "story"  # the shipped script's first question, "walk me through your life so far" (625 s)
    SHORT = "short"  # a question of the shipped script with a budget under the story's threshold


LENGTHS_S = (5, 20, 60)  # after a story question: a short question's long answer is ended between sentences
SHORT_ANSWERS = 3  # 5 s answers after a short question, in the full run
# --quick: 5 s answers of each kind in turn, in real time, as many as fit in the budget after the fewest.
QUICK_PLAN = ((5, Asked.STORY), (5, Asked.SHORT)) * 4
QUICK_MIN_TURNS = 4
GOAL_P50_S, GOAL_P95_S = 0.8, 1.5  # end of speech to first audio
QUICK_BUDGET_S = 150.0
CHUNK_S = 0.1  # the page's MediaRecorder timeslice: a frame of 100 ms
THREADS = 2
SECRET = "benchmark-secret-that-is-long-enough-to-be-accepted"
CONSENT = {"recording": True, "use": True, "withdrawal": True}
FIRST_ANSWER = "I was born in Dayton, Ohio, in 1961, and I grew up there with my three brothers."
TARGET_TEXT_S = 1.5
SPOKEN_ANSWER_GAP_S = 0.4  # bench_speech.spoken_answer ends every sentence, the last too, with this pause
MISSED_AFTER_S = voice_corpus.MISSED_AFTER_S


def webm_opus(samples: np.ndarray) -> tuple[bytes, list[int]]:
    """16 kHz float audio as Opus in WebM at 48 kHz, what Chromium's MediaRecorder sends, with the byte
    offsets where each frame's cluster ends: the recorder hands over one timeslice of audio at a time."""
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=48_000)
    frame = av.AudioFrame.from_ndarray(samples.astype(np.float32)[None, :], format="flt", layout="mono")
    frame.sample_rate = SAMPLE_RATE
    high = np.concatenate([f.to_ndarray().reshape(-1) for f in [*resampler.resample(frame), *resampler.resample(None)]])
    buffer, ends = io.BytesIO(), []
    # One cluster per frame, written as soon as it closes ("live"), as a recorder's timeslice would be.
    options = {"cluster_time_limit": str(round(CHUNK_S * 1000)), "live": "1"}
    with av.open(buffer, "w", format="webm", options=options) as container:
        stream = container.add_stream("libopus", rate=48_000, layout="mono")
        stream.bit_rate = 64_000
        step = 960  # 20 ms, Opus's frame
        for start in range(0, len(high), step):
            piece = av.AudioFrame.from_ndarray(high[None, start : start + step], format="flt", layout="mono")
            piece.sample_rate, piece.pts = 48_000, start
            for packet in stream.encode(piece):
                container.mux(packet)
                if buffer.tell() > (ends[-1] if ends else 0):
                    ends.append(buffer.tell())
        for packet in stream.encode(None):
            container.mux(packet)
    data = buffer.getvalue()
    return data, [end for end in ends if end < len(data)]


def browser_chunks(samples: np.ndarray) -> list[bytes]:
    """The recording cut where each frame's audio ends (only the first piece carries the header)."""
    data, ends = webm_opus(samples)
    cuts = [0, *ends[1:], len(data)]  # the first offset is the header alone: it goes with the first second
    return [data[a:b] for a, b in itertools.pairwise(cuts) if b > a]


class TimedTranscriber:
    """The transcriber, remembering how long its last call took."""

    def __init__(self, inner: WhisperTranscriber) -> None:
        self.inner, self.name, self.seconds = inner, inner.name, 0.0

    def transcribe(self, audio: np.ndarray, *, context: str | None = None):
        began = time.perf_counter()
        try:
            return self.inner.transcribe(audio, context=context)
        finally:
            self.seconds = time.perf_counter() - began

    def close(self) -> None:
        self.inner.close()


class TimedChat:
    """The chat model, remembering the seconds and tokens of its calls since the last ``reset``.

    A call that fails (a reply cut off at its token limit, say) counts its seconds but no tokens: 0/0/0
    tokens beside a long chat time means the model failed and the interviewer moved on without it.
    """

    def __init__(self, inner) -> None:  # any ChatModel
        self.inner, self.name = inner, inner.name
        self.reset()

    def reset(self) -> None:
        self.seconds, self.prompt_tokens, self.cached_tokens, self.completion_tokens = 0.0, 0, 0, 0

    def complete(self, request):
        began = time.perf_counter()
        try:
            result = self.inner.complete(request)
        finally:
            self.seconds += time.perf_counter() - began
        self.prompt_tokens += result.usage.prompt_tokens
        self.cached_tokens += result.usage.cached_tokens
        self.completion_tokens += result.usage.completion_tokens
        return result

    def close(self) -> None:
        self.inner.close()


@dataclass
class Timing:
    speech_end_to_eot: float
    speech_end_to_audio: float
    cut_in: bool
    eot_to_text: float
    eot_to_audio: float
    transcribe_s: float
    decide_s: float
    chat_s: float
    chat_prompt_tokens: int
    chat_cached_tokens: int
    chat_completion_tokens: int
    tts_first_s: float
    chunk_max_s: float
    wer: float
    budget_s: int | None  # the scripted question's time budget: what the turn-taking was chosen by
    question: str
    heard: str


def script_for(asked: Asked, settings: Settings) -> Script:
    """The script an interview of ``asked`` follows: the shipped one, or its questions that ask for a short
    answer alone (a budget under ``end_of_turn_story_question_s``), in their order."""
    script = load_script()
    if asked is Asked.STORY:
        return script
    data = script.model_dump()
    data["title"] = f"{script.title} (its short questions)"
    data["modules"] = [
        module | {"questions": [q for q in module["questions"] if q["seconds"] < settings.end_of_turn_story_question_s]}
        for module in data["modules"]
    ]
    data["modules"] = [module for module in data["modules"] if module["questions"]]
    return Script.model_validate(data)


def one_answer(
    sessions_factory,
    services: Services,
    speaker: PiperSpeaker,
    seconds: float,
    settings: Settings,
    pace: float,
    cache: SpeechCache,
    script: Script | None = None,
) -> Timing:
    """One interview of ``script`` (the shipped one by default): a typed first answer, then a spoken answer of
    about ``seconds``, timed."""
    with transaction(sessions_factory) as session:
        code = invitations.create_invitation(session, audit.Actor("operator", "benchmark"))
    with transaction(sessions_factory) as session:
        started = invitations.start(session, services, code, CONSENT, script=script)
        interview_id = started.interview.id
    transactions = partial(transaction, sessions_factory)
    participant_id = started.participant.id
    # What POST .../answer does: the turn, the interview locked, its reply stored in a transaction of its own.
    with sessions_factory() as session:
        interview = interviews.current(session, participant_id, lock=True)
        state = InterviewTurn.load(session, services, interview, transactions).answer(FIRST_ANSWER)
    # What a server does once a reply has gone, before the person speaks (``notes.after_reply``): the
    # notes, then the next decision's prompt up to the answer read into the model's cache.
    notes.after_reply(transactions, services, participant_id)
    services.chat.settle(120)

    turn = state.turn
    with sessions_factory() as session:
        asked = interviews.scripted_question(session.get_one(InterviewSession, interview_id))
        budget_s = None if asked is None else asked.seconds

    speech, said = spoken_answer(speaker, seconds)
    speech_end_s = len(speech) / SAMPLE_RATE - SPOKEN_ANSWER_GAP_S
    trailing = np.zeros(round((settings.end_of_turn_silence_s + 1.0) * SAMPLE_RATE), dtype=np.float32)
    chunks = browser_chunks(np.concatenate([speech, trailing]))
    chunk_seconds: list[float] = []

    began = time.perf_counter()

    def wait_until(audio_s: float) -> None:
        delay = began + audio_s / pace - time.perf_counter()
        if delay > 0:
            time.sleep(delay)

    ended_at = None
    for seq, chunk in enumerate(chunks):
        wait_until((seq + 1) * CHUNK_S)  # a frame leaves the browser when its audio is over
        received = time.perf_counter()
        # What PUT .../turns/{turn}/chunks/{seq} does, in one transaction.
        with transaction(sessions_factory) as session:
            interview = session.get_one(InterviewSession, interview_id)
            owner = InterviewTurn.load(session, services, interview, partial(transaction, sessions_factory))
            ended = owner.receive_chunk(turn, seq, chunk, take=None, max_bytes=settings.max_audio_chunk_bytes,
                                        taking=TurnTaking.of(settings)).end_of_turn  # fmt: skip
        chunk_seconds.append(time.perf_counter() - received)
        if ended:
            ended_at = time.perf_counter()
            break
    if ended_at is None:
        raise RuntimeError("the end of the turn was never detected")
    speech_end = began + speech_end_s / pace

    # What POST .../turns/{turn}/end does: join, decode, transcribe, let the interviewer decide, store.
    with sessions_factory() as session:
        interview = interviews.current(session, participant_id, lock=True)
        services.chat.reset()
        decide_began = time.perf_counter()
        state = InterviewTurn.load(session, services, interview, transactions).answer_spoken(turn)
        decided = time.perf_counter()
        scripted = scripted_sentences(interviews.script_of(interview))
    text_at = time.perf_counter()
    # What GET .../speech?part=0 does: the first sentence, from the speech cache when it is scripted.
    first_audio = cache.speak(speaker, split_sentences(state.prompt)[0], scripted)
    audio_at = time.perf_counter()
    chat = (services.chat.seconds, services.chat.prompt_tokens, services.chat.cached_tokens,
            services.chat.completion_tokens)  # fmt: skip
    # What the server does once the reply has gone: the notes on the answer, off the person's wait.
    notes.take_due(transactions, services, participant_id)
    heard = stored_turn_text(sessions_factory, services, interview_id, turn)
    assert first_audio.duration_s > 0
    transcribe_s = services.transcriber.seconds
    return Timing(
        speech_end_to_eot=ended_at - speech_end,
        speech_end_to_audio=audio_at - speech_end,
        cut_in=ended_at < speech_end - 0.05,  # the turn ended before the last word
        eot_to_text=text_at - ended_at,
        eot_to_audio=audio_at - ended_at,
        transcribe_s=transcribe_s,
        decide_s=decided - decide_began - transcribe_s,
        chat_s=chat[0],
        chat_prompt_tokens=chat[1],
        chat_cached_tokens=chat[2],
        chat_completion_tokens=chat[3],
        tts_first_s=audio_at - text_at,
        chunk_max_s=max(chunk_seconds),
        wer=word_error_rate(said, heard),
        budget_s=budget_s,
        question=state.prompt,
        heard=heard,
    )


CutOffs = dict[str, list[bool]]  # by kind of question, whether each answer that went on was cut off


def run_corpus(console: Console, transcriber: WhisperTranscriber, taking: TurnTaking,
               rooms: tuple[tuple[voice_corpus.Room, float], ...], figures: dict[str, object],
               how: voice_corpus.Pieces = voice_corpus.Pieces.CUT) -> tuple[list[bool], CutOffs]:  # fmt: skip
    """The corpus through the end of turn, room by room; whether each answer was cut into, and whether each
    answer that went on was cut off, after each kind of question. The answers that go on after a finished
    sentence (``voice_corpus.going_on``) are reported apart: how often their turn was ended between their
    sentences."""
    table = Table("room", "answers", "cut-in rate", "missed-end rate", "speech end → turn end p50", "p95",
                  "whisper calls per answer", "went on: ended between sentences", "after a story question")  # fmt: skip
    counting = voice_corpus.Counting(transcriber)
    story = taking.for_question(voice_corpus.STORY_BUDGET_S)
    heard_all: list[voice_corpus.Heard] = []
    between_all: list[bool] = []
    story_all: list[bool] = []
    cut_offs: CutOffs = {"short": [], "story": []}
    for room, snr in rooms:
        answers = list(voice_corpus.corpus(((room, snr),), how=how))
        heard = [(answer, voice_corpus.listen(answer, counting, taking)) for answer in answers]
        heard_all += [h for _, h in heard]
        # After the corpus's own answers, so that they are spoken as in every other run (``voice_corpus.SEED``).
        going = list(voice_corpus.going_on(((room, snr),)))
        going_on = [voice_corpus.listen(answer, counting, taking).cut_between for answer in going]
        after_story = [voice_corpus.listen(answer, counting, story).cut_between for answer in going]
        # Every answer of the corpus goes on after its pause: ended there at all, it was cut off.
        cut_offs["short"] += [h.cut_off for _, h in heard] + going_on
        cut_offs["story"] += after_story
        between_all += going_on
        story_all += after_story
        between, between_story = sum(going_on) / len(going_on), sum(after_story) / len(after_story)
        figures[f"corpus_{room}_going_on_ended_between_rate"] = between
        figures[f"corpus_{room}_going_on_after_a_story_question_ended_between_rate"] = between_story
        waits = [h.ended_s - a.speech_end_s for a, h in heard if h.ended_s is not None and not h.cut_in]
        p50, p95 = np.percentile(waits, [50, 95]) if waits else (float("nan"), float("nan"))
        cut_in = sum(h.cut_in for _, h in heard) / len(heard)
        missed = sum(h.missed_end for _, h in heard) / len(heard)
        name = f"{room} ({snr:g} dB)" if room is not voice_corpus.Room.QUIET else str(room)
        figures[f"corpus_{room}_cut_in_rate"], figures[f"corpus_{room}_missed_end_rate"] = cut_in, missed
        figures[f"corpus_{room}_speech_end_to_eot_p50"], figures[f"corpus_{room}_speech_end_to_eot_p95"] = p50, p95
        calls = sum(h.transcriptions for _, h in heard) / len(heard)
        table.add_row(name, str(len(heard)), f"{cut_in:.1%}", f"{missed:.1%}", f"{p50:.2f}", f"{p95:.2f}",
                      f"{calls:.1f}", f"{between:.1%} of {len(going_on)}", f"{between_story:.1%}")  # fmt: skip
    cut_in = sum(h.cut_in for h in heard_all) / len(heard_all)
    missed = sum(h.missed_end for h in heard_all) / len(heard_all)
    figures["corpus_answers"], figures["corpus_cut_in_rate"], figures["corpus_missed_end_rate"] = (
        len(heard_all), cut_in, missed,
    )  # fmt: skip
    figures["corpus_pieces"] = str(how)
    between = sum(between_all) / len(between_all)
    figures["corpus_going_on_answers"], figures["corpus_going_on_ended_between_rate"] = len(between_all), between
    between_story = sum(story_all) / len(story_all)
    figures["corpus_going_on_after_a_story_question_ended_between_rate"] = between_story
    table.add_row("corpus", str(len(heard_all)), f"{cut_in:.1%}", f"{missed:.1%}", "", "", "",
                  f"{between:.1%} of {len(between_all)}", f"{between_story:.1%}")  # fmt: skip
    console.print(table)
    for kind, cut in cut_offs.items():
        figures[f"corpus_cut_off_rate_after_{kind}_questions"] = sum(cut) / max(1, len(cut))
    return [h.cut_in for h in heard_all], cut_offs


def stored_turn_text(sessions_factory, services: Services, interview_id, position: int) -> str:
    """The text stored for one turn of the transcript."""
    with sessions_factory() as session:
        interview = session.get_one(InterviewSession, interview_id)
        _, cipher = interviews.cipher_of(session, services, interview)
        turns = load_turns(session, interview.transcript_id, cipher)
    return next(t.text for t in turns if t.position == position)


def with_database(run: Callable[[str], None]) -> None:
    """A temporary embedded PostgreSQL with the schema, for the length of ``run``."""
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    try:
        server = start_embedded_server(root / "postgres")
        upgrade(alembic_config(server.url))
        run(server.url)
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)


def percentiles(values: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(values, [50, 95])
    return float(p50), float(p95)


def goal_line(asked: Asked, firsts: list[float], patience_s: float) -> str:
    """End of speech to first audio after one kind of question, against the goal."""
    p50, p95 = percentiles(firsts)
    met = "meets" if p50 <= GOAL_P50_S and p95 <= GOAL_P95_S else "misses"
    why = f" (the turn passes after {patience_s:g} s of silence there)" if patience_s else ""
    return (f"after a {asked} question ({len(firsts)} answers): end of speech to first audio p50 {p50:.2f} s, "
            f"p95 {p95:.2f} s; {met} the goal of p50 {GOAL_P50_S} s, p95 {GOAL_P95_S} s{why}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="upload chunks as fast as they are processed")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS_S),
                        help="answer lengths in seconds, after a story question")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="a few 5 s answers of each kind in real time, in about three minutes")  # fmt: skip
    parser.add_argument("--pieces", choices=[str(how) for how in voice_corpus.Pieces], default="cut",
                        help="the corpus's pauses cut into a sentence spoken whole, or joined pieces")  # fmt: skip
    parser.add_argument("--chat-latency", type=float, default=None,
                        help="decide with a local OpenAI-compatible endpoint of this fixed latency (s)")  # fmt: skip
    args = parser.parse_args()
    plan = (
        QUICK_PLAN if args.quick else (*((n, Asked.STORY) for n in args.lengths), *((5, Asked.SHORT),) * SHORT_ANSWERS)
    )
    # Real time unless --fast: the decision starts in the pause that ends an answer, which only a real
    # pace leaves time for.
    pace = 1000.0 if args.fast else 1.0
    started = time.perf_counter()
    console = Console(width=170)
    settings = Settings(chat_provider="embedded", embedded_threads=THREADS, secret_key=SECRET)
    endpoint = None
    if args.chat_latency is not None:  # a remote endpoint of fixed latency instead of the embedded model
        port = free_port()
        endpoint = latency_server.start(port, args.chat_latency, None)
        settings = settings.model_copy(update={"chat_provider": "openai", "chat_model": "fixed-latency",
                                               "chat_base_url": f"http://127.0.0.1:{port}/v1"})  # fmt: skip
    scripts = {asked: script_for(asked, settings) for asked in Asked}
    timed: list[tuple[int, Asked, Timing]] = []
    cuts: list[bool] = []
    cut_offs: CutOffs = {"short": [], "story": []}  # the corpus's answers that went on

    def run(url: str) -> None:
        from sqlalchemy import create_engine

        engine = create_engine(url)
        factory = make_sessionmaker(engine)
        began = time.perf_counter()
        chat = build_chat_model(settings)
        transcriber = WhisperTranscriber(threads=THREADS)
        speaker = PiperSpeaker(threads=THREADS)
        figures: dict[str, object] = {"load_s": time.perf_counter() - began}
        figures["pace"] = "fast" if args.fast else "real time"
        figures["end_of_turn_voice"] = settings.end_of_turn_voice
        figures["end_of_turn_story_question_s"] = settings.end_of_turn_story_question_s
        keys = KeyRing(SECRET, MemoryKeyStore())
        cache = SpeechCache(Path(tempfile.mkdtemp(prefix="agentbank-speech-")))
        # As the server does: the decision may start in the pause that ends an answer (``speculation``).
        decider = SpeculativeChat(TimedChat(chat))
        services = Services(
            keys=keys,
            chat=decider,
            transcriber=TimedTranscriber(transcriber),
            summaries=Summaries.of(settings),
        )
        try:
            for asked in Asked:  # warm every model and the caches, each script's sentences too
                one_answer(factory, services, speaker, 3, settings, 1000.0, cache, scripts[asked])
            table = Table(
                "answer", "question", "speech end → turn end", "→ question audio", "turn end → text", "→ audio",
                "whisper", "chat", "chat tokens in/cached/out", "rest", "tts 1st", "max frame", "WER",
            )  # fmt: skip
            for n, (length, asked) in enumerate(plan):
                if args.quick and n >= QUICK_MIN_TURNS and time.perf_counter() - started > QUICK_BUDGET_S:
                    break  # --quick keeps to its few minutes, after its fewest turns
                t = one_answer(factory, services, speaker, length, settings, pace, cache, scripts[asked])
                timed.append((length, asked, t))
                cuts.append(t.cut_in)
                table.add_row(
                    f"{length} s" + (" (cut in)" if t.cut_in else ""),
                    f"{asked} ({t.budget_s} s)",
                    f"{t.speech_end_to_eot:.2f}",
                    f"{t.speech_end_to_audio:.2f}",
                    f"{t.eot_to_text:.2f}",
                    f"{t.eot_to_audio:.2f}",
                    f"{t.transcribe_s:.2f}",
                    f"{t.chat_s:.2f}",
                    f"{t.chat_prompt_tokens}/{t.chat_cached_tokens}/{t.chat_completion_tokens}",
                    f"{t.decide_s - t.chat_s:.2f}",
                    f"{t.tts_first_s:.2f}",
                    f"{t.chunk_max_s:.3f}",
                    f"{t.wer:.3f}",
                )
            console.print(table)
            figures["answers"] = [{"length_s": length, "asked": str(asked), **vars(t)} for length, asked, t in timed]
            by_length = Table("answer", "question", "n", "speech end → turn end p50", "p95",
                              "speech end → question audio p50", "p95", "missed ends")  # fmt: skip
            for length, asked in sorted(set(plan)):
                some = [t for n, a, t in timed if (n, a) == (length, asked)]
                if not some:
                    continue
                # The first audio the person hears: the acknowledgement, at the end of the turn.
                first = percentiles([t.speech_end_to_eot for t in some])
                question = percentiles([t.speech_end_to_audio for t in some])
                missed = sum(t.speech_end_to_eot > MISSED_AFTER_S for t in some)
                key = f"{asked}_{length}s"
                figures[f"{key}_speech_end_to_eot_p50"], figures[f"{key}_speech_end_to_eot_p95"] = first
                figures[f"{key}_speech_end_to_audio_p50"], figures[f"{key}_speech_end_to_audio_p95"] = question
                figures[f"{key}_missed_ends"] = missed
                by_length.add_row(f"{length} s", str(asked), str(len(some)), *(f"{x:.2f}" for x in (*first, *question)),
                                  str(missed))  # fmt: skip
            console.print(by_length)
            rooms = voice_corpus.QUICK_ROOMS if args.quick else voice_corpus.ROOMS
            corpus_cuts, corpus_offs = run_corpus(console, transcriber, TurnTaking.of(settings), rooms, figures,
                                                  voice_corpus.Pieces(args.pieces))  # fmt: skip
            cuts.extend(corpus_cuts)
            for kind, cut in corpus_offs.items():
                cut_offs[kind].extend(cut)
        finally:
            for closing in (chat, transcriber, speaker):
                closing.close()
            engine.dispose()
        twenty = [t.eot_to_text for n, _, t in timed if n == 20]
        if twenty:
            verdict = "meets" if twenty[0] < TARGET_TEXT_S else "misses"
            console.print(f"20 s answer: {twenty[0]:.2f} s to the next question ({verdict} the {TARGET_TEXT_S} s goal)")
        figures["median_eot_to_text"] = statistics.median(t.eot_to_text for _, _, t in timed)
        for asked in Asked:
            firsts = [t.speech_end_to_eot for _, a, t in timed if a is asked]
            if firsts:
                figures[f"{asked}_speech_end_to_first_audio_p50"], figures[f"{asked}_speech_end_to_first_audio_p95"] = (
                    percentiles(firsts)
                )
        # Other work on the machine slows every figure; the load average says how much there was.
        figures["load_average_1m_after"] = os.getloadavg()[0]
        load = figures["load_average_1m_after"]
        console.print(f"load average (1 min) at the end: {load:.2f} on {os.cpu_count()} CPUs")
        if (tuple(args.lengths) == LENGTHS_S or args.quick) and not args.fast and args.chat_latency is None:
            name = ("voice-quick" if args.quick else "voice") + ("-joined" if args.pieces == "joined" else "")
            console.print(f"saved to {save(name, figures)}")

    try:
        with_database(run)
    finally:
        if endpoint is not None:
            endpoint.terminate()
            endpoint.wait(10)
    for asked in Asked:
        firsts = [t.speech_end_to_eot for _, a, t in timed if a is asked]
        if firsts:
            story = asked is Asked.STORY
            print(goal_line(asked, firsts, settings.end_of_turn_story_patience_s if story
                            else settings.end_of_turn_patience_s))  # fmt: skip
    asked50, asked95 = percentiles([t.speech_end_to_audio for _, _, t in timed])
    print(f"end of speech to the next question's audio: p50 {asked50:.2f} s, p95 {asked95:.2f} s")
    p50, p95 = percentiles([t.speech_end_to_eot for _, _, t in timed])
    cut_in = 100.0 * sum(cuts) / max(1, len(cuts))
    print(f"end of speech to the end of the turn: p50 {p50:.2f} s, p95 {p95:.2f} s; cut-in rate {cut_in:.1f}%")
    for asked in Asked:
        nexts = [t.speech_end_to_audio for _, a, t in timed if a is asked]
        if nexts:
            n50, n95 = percentiles(nexts)
            print(f"after a {asked} question: next question p50 {n50:.2f} s, p95 {n95:.2f} s")
    every = [c for cut in cut_offs.values() for c in cut]
    offs = 100.0 * sum(every) / max(1, len(every))
    kinds = ", ".join(f"{100.0 * sum(c) / max(1, len(c)):.1f}% after {k} questions" for k, c in cut_offs.items())
    print(
        f"cut-offs: {offs:.1f}% of answers that went on ({kinds}); next question p50 {asked50:.2f} s, "
        f"p95 {asked95:.2f} s"
    )


if __name__ == "__main__":
    main()
