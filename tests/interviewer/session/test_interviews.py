"""Interview sessions on the real database: consent, answers, resume from the database alone, finish."""

import hashlib

import pytest
from sqlalchemy import select

from agentbank.building.transcripts import load_turns
from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.db.models import AudioChunk, AuditEvent, Participant, Transcript
from agentbank.db.models.interviews import AUDIO_DIGEST
from interviewer.hearing import recordings
from interviewer.hearing.transcription import BadAudioError
from interviewer.session import interviews, invitations, lifecycle
from interviewer.session.transcripts import state_of
from tests.support.interviews import CONSENT, OPERATOR, SCRIPT, answered, begin, receive, turn_of, wav_bytes


def test_consent_is_required_and_an_invitation_works_once(db, services):
    code = invitations.create_invitation(db, OPERATOR)
    with pytest.raises(InvalidRequestError):
        invitations.start(db, services, code, {**CONSENT, "use": False}, script=SCRIPT)
    invitations.start(db, services, code, CONSENT, script=SCRIPT)
    with pytest.raises(invitations.InvitationError):
        invitations.start(db, services, code, CONSENT, script=SCRIPT)


def test_a_simulated_interviewee_completes_the_script(db, services):
    _, started = begin(db, services)
    interview = started.interview
    state = state_of(db, services, interview)
    assert state.status == "active" and state.question_key == SCRIPT.modules[0].questions[0].key and state.turn == 2
    answers = 0
    while state.status == "active":
        state = answered(db, services, interview, f"My answer number {answers}.", seconds=20)
        answers += 1
    assert state.status == "review" and state.progress == 100 and answers == 6  # one follow-up per question
    turns = lifecycle.transcript(db, services, interview)
    assert turns[-1].text == SCRIPT.closing.strip() and [t.speaker for t in turns[:3]] == [
        "interviewer",
        "participant",
        "interviewer",
    ]
    code = lifecycle.finish(db, services, interview, [lifecycle.Redaction(2, "number 0")], confirm=True)
    assert len(code) > 30
    participant = db.get(Participant, interview.participant_id)
    assert participant.consent == "consented" and db.get(Transcript, interview.transcript_id).status == "final"
    cipher = services.keys.cipher(participant.id, participant.wrapped_key)
    assert load_turns(db, interview.transcript_id, cipher)[1].text == "My answer [redacted]."
    actions = set(db.scalars(select(AuditEvent.action).where(AuditEvent.participant_id == participant.id)))
    assert {"interview.start", "interview.answer", "interview.finish"} <= actions


def test_state_comes_from_the_database_alone(db, services):
    _, started = begin(db, services)
    answered(db, services, started.interview, "First answer.", seconds=5)
    db.expunge_all()  # as after a restart: nothing in memory
    fresh = interviews.current(db, started.participant.id)
    state = state_of(db, services, fresh)
    assert state.turn == 4 and state.prompt.startswith("Could you tell me more")
    lifecycle.pause(db, services, fresh)
    with pytest.raises(ConflictError):
        turn_of(db, services, fresh).answer("While paused.")
    assert turn_of(db, services, fresh).resume().status == "active"


def test_a_chunks_digest_is_kept_keyed_so_a_backup_cannot_confirm_a_guessed_recording(db, services):
    _, started = begin(db, services)
    data = wav_bytes(0.5)
    ack = receive(db, services, started.interview, 2, 0, data, max_bytes=10**6).ack
    assert ack.sha256 == hashlib.sha256(data).hexdigest()  # the sender's receipt
    (kept,) = db.scalars(select(AudioChunk.sha256).where(AudioChunk.session_id == started.interview.id)).all()
    _, cipher = interviews.cipher_of(db, services, started.interview)
    assert kept != ack.sha256 and kept == cipher.digest(AUDIO_DIGEST, ack.sha256)


def test_audio_chunks_idempotent_and_bad_audio_leaves_the_interview_intact(db, services):
    _, started = begin(db, services)
    interview = started.interview
    data = wav_bytes(1.0)
    half = len(data) // 2
    first = receive(db, services, interview, 2, 0, data[:half], max_bytes=10**6).ack
    again = receive(db, services, interview, 2, 0, data[:half], max_bytes=10**6).ack
    assert again.duplicate and again.sha256 == first.sha256
    with pytest.raises(ConflictError):
        receive(db, services, interview, 2, 0, wav_bytes(0.5), max_bytes=10**6)
    with pytest.raises(BadAudioError):
        receive(db, services, interview, 3, 0, b"not audio at all", max_bytes=10**6)
    with pytest.raises(BadAudioError):
        receive(db, services, interview, 2, 1, b"", max_bytes=10**6)
    receive(db, services, interview, 2, 1, data[half:], max_bytes=10**6)
    state = turn_of(db, services, interview).answer_spoken(2)
    assert state.turn == 4 and lifecycle.transcript(db, services, interview)[1].text == "This is a test answer."
    # Silence: a clear error, and the interview is where it was.
    receive(db, services, interview, 4, 0, wav_bytes(1.0, tone=False), max_bytes=10**6)
    with pytest.raises(recordings.NoSpeechError):
        turn_of(db, services, interview).answer_spoken(4)
    assert recordings.discard_turn(db, services.streams, interview, 4) == 1
    assert state_of(db, services, interview).turn == 4
    assert db.scalar(select(AudioChunk.id).where(AudioChunk.turn == 4)) is None
