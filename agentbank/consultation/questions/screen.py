"""The screen's verdict on a team's open questions, before any model is asked.

``judge`` reads a question (as written, and every decoding found inside it, so an instruction sent in
base64 is read too) against every rule of ``rules.RULES``: a question is *refused* when a rule's strong
pattern matches, or a weak one beside a reference to the interview's words; it is *held* when only a
weak pattern matches. ``admit`` is the restricted tier's use of it: a refusal is audited in the
caller's transaction and raised as a clear 422 naming the rule (the caller commits the audit event
with the refusal); held questions are answered but their answers wait for a reviewer, whatever the
output check says of them.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.output_check.canonical import canonical_tokens
from agentbank.consultation.output_check.decoding import decoded_variants
from agentbank.consultation.questions.rules import REFERENCE, RULES, Rule
from agentbank.core.errors import InvalidRequestError

HELD_REASON = "question:{rule}"  # the reason a held question's answer is in the reviewers' queue


class Action(StrEnum):
    REFUSE = "refuse"
    HOLD = "hold"


@dataclass(frozen=True)
class Finding:
    """A rule a question breaks, and what follows."""

    rule: Rule
    action: Action


class QuestionRefusedError(InvalidRequestError):
    """A question asks for the interview's words rather than the person's views; refused before any model call."""

    code = "question_refused"
    recorded = True  # the refusal's audit event is in the caller's transaction, to be committed


def _readings(question: str) -> list[str]:
    return [" ".join(canonical_tokens(text)) for text in decoded_variants(question)]


def judge(question: str) -> Finding | None:
    """The first rule the question breaks, refusals before holds; None for a question the screen lets through."""
    readings = _readings(question)
    referenced = any(REFERENCE.search(text) for text in readings)
    held: Finding | None = None
    for rule in RULES:
        for text in readings:
            if any(p.search(text) for p in rule.strong) or (referenced and any(p.search(text) for p in rule.weak)):
                return Finding(rule, Action.REFUSE)
            if held is None and any(p.search(text) for p in rule.weak):
                held = Finding(rule, Action.HOLD)
    return held


def question_hash(question: str) -> str:
    """The hash the audit log keeps of a question (its wording stays out of the log)."""
    return hashlib.sha256(" ".join(question.split()).encode()).hexdigest()


def admit(session: Session, actor: audit.Actor, project_id: uuid.UUID, questions: Sequence[str]) -> dict[int, str]:
    """The held questions (index -> rule) of a job that may be asked; refuses (audited) one that may not."""
    held = {}
    for index, question in enumerate(questions):
        finding = judge(question)
        if finding is None:
            continue
        if finding.action is Action.HOLD:
            held[index] = finding.rule.name
            continue
        audit.record(
            session, actor, "job.refused", Tier.RESTRICTED, project_id=project_id,
            details={"rule": finding.rule.name, "question": index + 1, "question_sha256": question_hash(question)},
        )  # fmt: skip
        raise QuestionRefusedError(
            f"question {index + 1} {finding.rule.refuses} (rule {finding.rule.name}): such questions are refused "
            "before any agent is asked",
            hint="ask for the person's views and experiences in your own words",
        )
    return held


def holds(questions: Sequence[str]) -> list[tuple[str, ...]]:
    """Per question, the reasons its answer is held for a reviewer (none for most); for the door at answer
    time, where a refused question never arrives (and is refused again if one does)."""
    reasons: list[tuple[str, ...]] = []
    for question in questions:
        finding = judge(question)
        reasons.append((HELD_REASON.format(rule=finding.rule.name),) if finding is not None else ())
    return reasons
