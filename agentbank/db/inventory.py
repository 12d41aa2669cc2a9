"""The data inventory: what every column of every table holds, in one of four kinds.

The bank's rule (privacy by construction): anything about a person — their words, audio, survey answers,
demographics, their agent's answers and scores, notes, vectors or digests of any of these — is written
only sealed with their data key (destroyed when they withdraw), or as an aggregate a release protects.
Everything else is a pseudonymous identifier or operational. A test compares this inventory with the
migrated database: a column nobody classified fails it, and so does one classified here that no longer
exists, so the inventory cannot drift from the schema.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """What a column may hold."""

    SEALED = "sealed with the participant's data key"
    KEYED = "a digest keyed under the participant's data key: comparable while they are in, meaningless after"
    PSEUDONYMOUS = "a pseudonymous identifier (random, naming nobody)"
    RELEASED = "an aggregate a release protects (noise under the release's budget)"
    OPERATIONAL = "operational: how the bank runs, nothing a person said, answered or is"


S, K, P, R, O = Kind.SEALED, Kind.KEYED, Kind.PSEUDONYMOUS, Kind.RELEASED, Kind.OPERATIONAL  # noqa: E741 - a legend

# Table -> column -> kind. Operational text columns (a team's title, a build's failure reason) never hold a
# participant's words: the bank writes them from its own vocabulary or the team's application.
INVENTORY: dict[str, dict[str, Kind]] = {
    "participants": {"id": P, "pseudonym": P, "source_ref": P, "demographics_encrypted": S, "consent": O,
                     "wrapped_key": O, "created_at": O},
    "transcripts": {"id": P, "participant_id": P, "version": O, "status": O, "created_at": O, "finalized_at": O},
    "transcript_turns": {"id": O, "transcript_id": P, "position": O, "speaker": O, "text_encrypted": S,
                         "started_at": O, "ended_at": O},
    "interview_sessions": {"id": P, "participant_id": P, "transcript_id": P, "script_key": O, "script_version": O,
                           "script_fingerprint": O, "script": O, "status": O, "consent": O, "consented_at": O,
                           "question_index": O, "follow_ups": O, "seconds_used": O, "notes_encrypted": S,
                           "reflecting": O, "notes_through": O, "audio_take": O, "created_at": O, "updated_at": O,
                           # counts, never words (kept at write time, so a coordinator's view opens no
                           # transcript); zeroed on withdrawal
                           "answers_given": O, "answer_words": O, "follow_ups_asked": O, "audio_flags": O},
    "audio_chunks": {"id": O, "session_id": P, "turn": O, "seq": O, "data_encrypted": S, "sha256": K, "bytes": O,
                     "received_at": O},
    "audio_partials": {"id": O, "session_id": P, "turn": O, "start_sample": O, "end_sample": O, "chunks": O,
                       "chunks_sha256": K, "model": O, "text_encrypted": S, "created_at": O},
    "interview_invitations": {"id": O, "code_hash": O, "created_at": O, "used_at": O, "session_id": P,
                              "study_id": O, "expires_at": O, "revoked_at": O, "panel_ref_encrypted": S,
                              "contact_encrypted": S, "reminded_at": O, "reminder_failed_at": O,
                              # what the panel reported (returned, timed out), an outcome like a stage;
                              # cleared when the person withdraws
                              "panel_outcome": O, "panel_outcome_at": O},
    # A study's own settings: the coordinator's, nobody's data.
    "studies": {"id": O, "name": O, "script_key": O, "script_version": O, "target_size": O, "expires_at": O,
                "panel": O, "panel_param": O, "completion_url": O, "retest_completion_url": O, "open_code_hash": O,
                "owner_pk": O, "created_at": O, "completion_codes": O},
    "battery_waves": {"participant_id": P, "wave": O, "status": O, "due_at": O, "completed_at": O},
    "battery_answers": {"id": O, "participant_id": P, "wave": O, "item": O, "answer_encrypted": S, "answered_at": O},
    "agents": {"id": P, "participant_id": P, "version": O, "transcript_id": P, "status": O, "build": O,
               "persona_encrypted": S, "deny_list_encrypted": S, "created_at": O},
    "memories": {"id": O, "agent_id": P, "kind": O, "expert": O, "position": O, "first_turn": O, "last_turn": O,
                 "word_count": O, "text_encrypted": S, "embedding_encrypted": S},
    "answers": {"id": O, "cache_key": O, "agent_id": P, "agent_version": O, "item_id": O, "item_version": O,
                "question_sha256": O, "condition": O, "condition_params": O, "model": O, "prompt_version": O,
                "sampling": O, "seed": O, "payload_encrypted": S, "prompt_tokens": O, "cached_tokens": O,
                "completion_tokens": O, "seconds": O, "created_at": O},
    "population_answers": {"agent_id": P, "instrument": O, "answers_encrypted": S, "updated_at": O},
    "report_cards": {"id": O, "agent_id": P, "instrument": O, "run_id": O, "condition": O, "model": O,
                     "prompt_version": O, "scores_encrypted": S, "created_at": O},
    "releases": {"id": O, "cut_at": O, "agents": R, "k": O, "cut_by": O, "dimensions": O, "weights": R,
                 "privacy": O, "mu": O, "state_digest": O, "manifest_sha256": O},
    # Which tables researchers asked for (an item and breakdowns of a public instrument), and when.
    "table_requests": {"instrument": O, "item": O, "breakdowns": O, "first_asked_at": O, "last_asked_at": O,
                       "asks": O, "first_release": O},
    "open_reads": {"client_id": O, "day": O, "reads": O, "not_modified": O},
    "release_tables": {"release_id": O, "instrument": O, "item": O, "breakdowns": O, "released": R},
    "release_validity": {"release_id": O, "instrument": O, "item": O, "scored": R, "right": R, "repeated": R,
                         "baseline_right": R, "baseline": O, "model": O, "run_id": O, "measured_at": O},
    "jobs": {"id": O, "project_id": O, "client_pk": O, "idempotency_key": O, "request_hash": O, "request": O,
             "status": O, "total": O, "done": O, "created_at": O, "finished_at": O, "estimate": O},
    "team_instruments": {"id": O, "project_id": O, "key": O, "version": O, "definition": O, "digest": O, "source": O,
                         "not_imported": O, "created_by": O, "created_at": O},
    "job_estimates": {"id": O, "project_id": O, "request_hash": O, "figures": O, "created_at": O},
    "job_results": {"id": O, "job_id": O, "agent_id": P, "answer_ids": O, "made_ids": O, "status": O,
                    "created_at": O},
    "withheld_answers": {"id": O, "job_result_id": O, "job_id": O, "project_id": O, "agent_id": P, "answer_id": O,
                         "position": O, "reasons": O, "status": O, "decided_by": O, "decided_at": O, "note": O,
                         "created_at": O},
    # A focus group: the team's guide and stimulus (``request``), seats naming agents, and per turn the moderator's
    # words (the guide's own, with seat labels: chosen from the guide, never written by a model) or the ids of the
    # answers an agent gave (sealed in ``answers``), and the output check's reasons for a silence.
    "focus_groups": {"id": O, "project_id": O, "client_pk": O, "idempotency_key": O, "request_hash": O,
                     "request": O, "status": O, "model": O, "reason": O, "estimate": O, "created_at": O,
                     "finished_at": O},
    "focus_group_seats": {"group_id": O, "seat": O, "agent_id": P, "status": O, "removed_at": O},
    "focus_group_utterances": {"id": O, "group_id": O, "number": O, "round": O, "kind": O, "seat": O, "agent_id": P,
                               "action": O, "guide_ref": O, "about": O, "text": O, "answer_ids": O, "reasons": O,
                               "prompt_tokens": O, "cached_tokens": O, "completion_tokens": O, "created_at": O},
    "outbox": {"id": O, "topic": O, "project_id": O, "payload": O, "created_at": O, "delivered_at": O},
    "build_failures": {"id": O, "participant_id": P, "task_id": O, "attempt": O, "error": O, "reason": O, "hint": O,
                       "created_at": O},
    "clients": {"id": O, "client_id": O, "name": O, "secret_hash": O, "scopes": O, "status": O, "created_at": O,
                "revoked_at": O},
    "people": {"id": O, "email": O, "client_pk": O, "created_at": O},  # staff and researchers who sign in
    "access_tokens": {"id": O, "token_hash": O, "client_pk": O, "participant_id": P, "person_id": O, "scopes": O,
                      "issued_at": O, "expires_at": O, "revoked_at": O},
    "projects": {"id": O, "title": O, "purpose": O, "harms": O, "pi_pk": O, "requested": O, "status": O,
                 "scope": O, "quota_used": O, "decided_by": O, "decided_at": O, "decision_note": O,
                 "created_at": O},
    "project_members": {"project_id": O, "client_pk": O, "accepted_at": O},
    "project_approvals": {"project_id": O, "reviewer_pk": O, "scope": O, "note": O, "approved_at": O},
    "audit_events": {"id": O, "seq": O, "created_at": O, "actor_kind": O, "actor_id": P, "action": O, "tier": O,
                     "project_id": O, "agent_id": P, "participant_id": P, "details": O, "prev_hash": O, "hash": O,
                     "quarantined": O, "placed_digest": O, "leaf_version": O},
    "audit_checkpoints": {"id": O, "seq": O, "head_hash": O, "signed_at": O, "key_id": O, "signature": O,
                          "note": O},
    # The Merkle tree over the events (hashes of what is in audit_events), and witnesses' signatures: nobody's data.
    "audit_tree_nodes": {"level": O, "idx": O, "hash": O},
    "audit_cosignatures": {"id": O, "checkpoint_id": O, "witness": O, "line": O, "received_at": O},
    "instruments": {"id": O, "key": O, "version": O, "title": O, "preamble": O, "source": O},
    "items": {"id": O, "instrument_id": O, "key": O, "version": O, "kind": O, "question": O, "options": O,
              "minimum": O, "maximum": O, "meta": O},
    "call_limits": {"key": O, "tat": O},
    "model_batches": {"id": O, "status": O, "provider_batch_id": O, "provider_status": O, "model": O,
                      "instrument": O, "items": O, "agent_ids": P, "requests": O, "answered": O, "failed": O,
                      "details": O, "created_at": O, "finished_at": O},
}  # fmt: skip

# The task queue's own tables (procrastinate): task names, queues, times, and arguments that name agents,
# participants, items and jobs by identifier, never an answer or a word.
QUEUE_TABLES_PREFIX = "procrastinate_"
NOT_DATA = ("alembic_version",)  # the schema's revision
