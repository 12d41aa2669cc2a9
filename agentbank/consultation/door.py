"""The one door to a bank agent: every answer a participant's agent gives passes through here.

Whoever asks — a team's job, the population job behind the open tier, the operator's command line,
the demo, the evaluation — asks through ``AgentDoor`` with a ``Grant`` that says who asks, under
which tier and for what purpose. The door

1. checks that the agent may answer: active, its participant consenting, their data key alive;
2. checks that the grant still holds (a team's project approved, unexpired, with the agent in scope);
3. answers with the answering engine (which nothing else calls), its model calls outside any transaction;
4. applies the output check where the tier requires it (the restricted tier's individual answers), against
   what the project already received from the agent, one release per (project, agent) at a time;
5. appends one audit event for the agent, so the participant's portal lists the use with its purpose.

Nothing is released without the event, and the event commits (or not) with what the caller writes of the
answers. Answers the model made stay in the answer cache, sealed with the participant's key, even when
the release fails: they are the bank's own work, never shown to anyone without a release, and a
withdrawal destroys them with the rest.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering import AgentAnswer, AgentUnavailableError, Condition
from agentbank.consultation.answering.call_pool import CallPool
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.consultation.answering.plans import Made, PendingCall, Plan
from agentbank.consultation.answering.trials import EarlierStep, TrialStep, earlier_step
from agentbank.consultation.answering.utterances import GroupTurn
from agentbank.consultation.output_check import withheld
from agentbank.consultation.output_check.check import Verdict
from agentbank.consultation.questions.screen import Action, holds, judge, question_hash
from agentbank.core.errors import NotFoundError, PermissionDeniedError
from agentbank.core.statuses import AgentStatus, ConsentStatus, ProjectStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, Participant, Project
from agentbank.instruments.model import Instrument, Item
from agentbank.instruments.team import split_ref
from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.providers.in_flight import InFlight


@dataclass(frozen=True)
class Grant:
    """Who asks, under which tier, and why; ``details`` travel into the audit event (a job's id)."""

    actor: audit.Actor
    tier: Tier
    action: str
    purpose: str
    project_id: uuid.UUID | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def job(cls, project_id: uuid.UUID, job_id: uuid.UUID) -> Grant:
        """A worker answering an approved project's job."""
        return cls(audit.Actor("system", "worker"), Tier.RESTRICTED, "job.answer", "a research team's approved study",
                   project_id, {"job_id": str(job_id)})  # fmt: skip

    @classmethod
    def focus_group(cls, project_id: uuid.UUID, group_id: uuid.UUID) -> Grant:
        """A worker running an approved project's focus group: each utterance is a use of its agent."""
        return cls(audit.Actor("system", "worker"), Tier.RESTRICTED, "focus_group.answer",
                   "a research team's approved focus group", project_id, {"group_id": str(group_id)})  # fmt: skip

    @classmethod
    def estimate(cls, project_id: uuid.UUID) -> Grant:
        """A team's dry run: the calls its job would make are planned under the project's grant, none made."""
        return cls(audit.Actor("system", "api"), Tier.RESTRICTED, "job.estimate", "a research team's estimate",
                   project_id)  # fmt: skip

    @classmethod
    def operator(cls, purpose: str, actor_id: str = "cli") -> Grant:
        """The operator asking from the command line, saying why."""
        return cls(audit.Actor("operator", actor_id), Tier.OPERATOR, "operator.answer", purpose)

    @classmethod
    def evaluation(cls, run_id: str) -> Grant:
        """An evaluation run scoring agents against their people's own answers."""
        return cls(audit.Actor("operator", "evaluation"), Tier.EVALUATION, "evaluation.answer",
                   "checking how well agents answer as their people do", details={"run": run_id})  # fmt: skip

    @classmethod
    def experiment(cls, run_id: str) -> Grant:
        """The operator running a published experiment on agents, to set their effects beside people's."""
        return cls(audit.Actor("operator", "experiment"), Tier.OPERATOR, "experiment.answer",
                   "a published experiment, run on agents to compare with people", details={"run": run_id})  # fmt: skip


# A project's releases from one agent, one at a time (with the pair as the second key, hashed).
RECEIVED_LOCK = 0x72637664  # "rcvd"

POPULATION = Grant(audit.SYSTEM, Tier.OPEN, "population.answer", "answers counted only in the open tier's totals")


@dataclass(frozen=True)
class Consultation:
    """The agent's answers, and the output check's verdict on each where the tier checks them."""

    answers: list[AgentAnswer]
    verdicts: list[Verdict]

    @property
    def released(self) -> bool:
        """Whether every answer passed the check (or none needed it)."""
        return all(v.released for v in self.verdicts)


# What a caller writes of the answers in the release's transaction (a job's result, the open tier's codes).
Then = Callable[[Session, Consultation], None]


class AgentDoor:
    """Answers of bank agents for every caller; built once per process, given a session factory per call.

    An agent's answers come in three steps (``answering.plans``): a short transaction that checks the
    agent and the grant and plans the model calls; the calls, outside any transaction, up to
    ``calls_in_flight`` at once for the whole process, each answer stored as it is made; and the release,
    in one transaction: the checks again (a participant who withdrew meanwhile gets nothing released),
    the answers read back from the cache, the output check, the audit event, and the caller's ``then``
    (a job's result, the open tier's codes), which so commit together.
    """

    def __init__(
        self, *, chat: ChatModel, embedder: Embedder, keys: KeyRing, memory_token_budget: int,
        calls_in_flight: int | InFlight = 1,
    ) -> None:  # fmt: skip
        self.keys = keys
        self._engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=memory_token_budget)
        # The process's calls in flight (shared with its builds), or a limit of this door's own.
        self._calls = CallPool(calls_in_flight if isinstance(calls_in_flight, InFlight) else InFlight(calls_in_flight))

    @property
    def chat(self) -> ChatModel:
        """The chat model this door answers (or, for estimates, plans) with."""
        return self._engine.chat

    def close(self) -> None:
        """Start no more model calls (the models themselves are closed by their owner)."""
        self._calls.close()

    def survey(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        instrument: Instrument,
        items: Sequence[Item],
        condition: Condition | None = None,
        *,
        then: Then | None = None,
        **options: Any,
    ) -> Consultation:
        """The agent's answers to ``items`` (``options`` as the engine's: items per call, seed, reasons)."""
        condition = condition or Condition()
        details = {"kind": "survey", "instrument": instrument.key, "items": [i.key for i in items],
                   "condition": condition.name}  # fmt: skip

        def plan(session: Session, agent: Agent, participant: Participant) -> list[Plan]:
            _instrument_allowed(session, grant, instrument)
            return [self._engine.plan_survey(session, agent, participant, instrument, items, condition, **options)]

        return self._through(sessions, grant, agent_id, details, plan, then)

    def planned_calls(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        instrument: Instrument,
        items: Sequence[Item],
        condition: Condition | None = None,
        **options: Any,
    ) -> list[PendingCall]:
        """The model calls the agent's answers to ``items`` still need (none when all are stored), checked
        as any consultation is. Nothing is asked and nothing released, so nothing is audited: a batch
        sends these calls, and its answers are released through ``survey`` like any others."""
        with transaction(sessions) as session:
            agent, participant = _admitted(session, grant, agent_id)
            _instrument_allowed(session, grant, instrument)
            plan = self._engine.plan_survey(session, agent, participant, instrument, items, condition, **options)
        return plan.calls

    def planned_asks(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        questions: Sequence[str],
        condition: Condition | None = None,
        *,
        seed: int = 0,
    ) -> list[PendingCall]:
        """The model calls the agent's open answers to ``questions`` still need, checked as any consultation
        is; nothing is asked, released or audited (an estimate counts them)."""
        with transaction(sessions) as session:
            agent, participant = _admitted(session, grant, agent_id)
            plans = [self._engine.plan_ask(session, agent, participant, q, condition, seed=seed) for q in questions]
        return [call for plan in plans for call in plan.calls]

    def ask(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        questions: Sequence[str],
        condition: Condition | None = None,
        *,
        seed: int = 0,
        then: Then | None = None,
    ) -> Consultation:
        """Open-ended answers in the participant's voice, one per question."""
        condition = condition or Condition()
        # The asker's wording stays out of the log; its hash lets a participant match a published study.
        hashes = [question_hash(q) for q in questions]
        details = {"kind": "open", "question_sha256": hashes, "condition": condition.name}
        held: list[tuple[str, ...]] = []
        if grant.tier is Tier.RESTRICTED:
            held = _screened(questions)

        def plan(session: Session, agent: Agent, participant: Participant) -> list[Plan]:
            return [self._engine.plan_ask(session, agent, participant, q, condition, seed=seed) for q in questions]

        return self._through(sessions, grant, agent_id, details, plan, then, held)

    def speak(
        self, sessions: sessionmaker[Session], grant: Grant, agent_id: uuid.UUID, turn: GroupTurn, *,
        then: Then | None = None,
    ) -> Consultation:  # fmt: skip
        """The agent's utterance at its seat in a focus group, then where it stands (two answers, checked,
        released and audited as one consultation). The moderator's words are screened as a team's question
        is: a question asking for the interview is refused before any model call."""
        details = {"kind": "focus_group", "utterance": turn.number, "question_sha256": [question_hash(turn.question)]}
        held: list[tuple[str, ...]] = []
        if grant.tier is Tier.RESTRICTED:
            held = [*_screened([turn.question]), ()]  # the stance, a code, is held with nothing of its own

        def plan(session: Session, agent: Agent, participant: Participant) -> list[Plan]:
            return [self._engine.plan_utterance(session, agent, participant, turn)]

        return self._through(sessions, grant, agent_id, details, plan, then, held)

    def planned_utterance(
        self, sessions: sessionmaker[Session], grant: Grant, agent_id: uuid.UUID, turn: GroupTurn
    ) -> list[PendingCall]:
        """The model call an utterance still needs (none when stored), checked as any consultation is;
        nothing is asked, released or audited (a focus group's dry run counts it)."""
        with transaction(sessions) as session:
            agent, participant = _admitted(session, grant, agent_id)
            plan = self._engine.plan_utterance(session, agent, participant, turn)
        return plan.calls

    def trial(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        steps: Sequence[TrialStep],
        condition: Condition | None = None,
        *,
        details: dict[str, Any],
        then: Then | None = None,
        **options: Any,
    ) -> Consultation:
        """An experiment's trial: each step (its stimulus as the instrument's preamble, its questions) asked
        after the earlier steps are answered, with those shown to it (``answering.trials``); released and
        audited once, as one consultation. ``details`` say what was run (experiment, arm) for the log."""
        condition = condition or Condition()
        plans: list[Plan] = []
        earlier: list[EarlierStep] = []
        for step in steps:
            shown = earlier if step.after_earlier else []
            with transaction(sessions) as session:
                agent, participant = _admitted(session, grant, agent_id)
                plan = self._engine.plan_survey(
                    session, agent, participant, step.instrument, step.items, condition, earlier=shown, **options
                )
            self._make(sessions, grant, agent_id, [plan])
            with transaction(sessions) as session:
                _admitted(session, grant, agent_id)
                answers = self._engine.release(session, plan)  # read back to show the next step, not released
            earlier.append(earlier_step(step.instrument, step.items, answers, plan.keys))
            plans.append(plan)
        asked = {"kind": "experiment", "condition": condition.name, **details}
        return self._release(sessions, grant, agent_id, plans, asked, then)

    def _through(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        details: dict[str, Any],
        plan: Callable[[Session, Agent, Participant], list[Plan]],
        then: Then | None,
        held: Sequence[tuple[str, ...]] = (),
    ) -> Consultation:
        with transaction(sessions) as session:
            plans = plan(session, *_admitted(session, grant, agent_id))
        self._make(sessions, grant, agent_id, plans)
        return self._release(sessions, grant, agent_id, plans, details, then, held)

    def _make(self, sessions: sessionmaker[Session], grant: Grant, agent_id: uuid.UUID, plans: list[Plan]) -> None:
        self._calls.make(plans, self._engine.make, lambda p, c, m: self._store(sessions, grant, agent_id, p, c, m))

    def _release(
        self,
        sessions: sessionmaker[Session],
        grant: Grant,
        agent_id: uuid.UUID,
        plans: list[Plan],
        details: dict[str, Any],
        then: Then | None,
        held: Sequence[tuple[str, ...]] = (),
    ) -> Consultation:
        """``held``: per answer, reasons it waits for a reviewer whatever the check says (a held question)."""
        with transaction(sessions) as session:
            if grant.project_id is not None:
                _one_release_at_a_time(session, grant.project_id, agent_id)
            agent, participant = _admitted(session, grant, agent_id)
            answers = [answer for each in plans for answer in self._engine.release(session, each)]
            verdicts = []
            if grant.tier is Tier.RESTRICTED:
                verdicts = withheld.screen(session, self.keys, agent, participant, answers, grant.project_id, held)
            consultation = Consultation(answers, verdicts)
            audit.record(
                session, grant.actor, grant.action, grant.tier, project_id=grant.project_id, agent_id=agent.id,
                participant_id=participant.id,
                details={"purpose": grant.purpose, **grant.details, **details, "released": consultation.released,
                         "withheld": sum(not v.released for v in verdicts)},
            )  # fmt: skip
            if then is not None:
                then(session, consultation)
        return consultation

    def _store(
        self, sessions: sessionmaker[Session], grant: Grant, agent_id: uuid.UUID, plan: Plan, call: PendingCall,
        made: Made,
    ) -> None:  # fmt: skip
        # Its own transaction, so the answer survives whatever fails later; stored only while the agent
        # may still answer (a withdrawal waits for it, or it finds the withdrawal and stores nothing).
        # The checks are the plan's and the release's, on the agent's and participant's columns alone:
        # storing needs neither row (the plan holds the agent's version and the participant's cipher).
        with transaction(sessions) as session:
            _still_admitted(session, grant, agent_id)
            self._engine.store(session, plan, call, made)


def _screened(questions: Sequence[str]) -> list[tuple[str, ...]]:
    """Per question, why its answer waits for a reviewer; a question the screen refuses is never asked
    (the job's submission refused it: one that arrives anyway was queued before the rule existed)."""
    for number, question in enumerate(questions, 1):
        finding = judge(question)
        if finding is not None and finding.action is Action.REFUSE:
            raise PermissionDeniedError(f"question {number} {finding.rule.refuses} (rule {finding.rule.name})")
    return holds(questions)


def _one_release_at_a_time(session: Session, project_id: uuid.UUID, agent_id: uuid.UUID) -> None:
    """Hold the (project, agent) pair to the end of the transaction, across every worker and thread.

    The output check reads what the project has received from the agent, and the caller's ``then``
    records what is released now: two releases checked at once would each miss the other (two halves of
    a turn, each under the span). The second waits here until the first commits, then reads it.
    """
    pair = f"{project_id}:{agent_id}"
    session.execute(text("SELECT pg_advisory_xact_lock(:key, hashtext(:pair))"), {"key": RECEIVED_LOCK, "pair": pair})


def _admitted(session: Session, grant: Grant, agent_id: uuid.UUID) -> tuple[Agent, Participant]:
    """The agent and its participant, if the agent may answer under ``grant``. The participant's row is
    held (FOR SHARE) to the end of the transaction, so a withdrawal cannot commit in between."""
    agent, participant = _admission(session, agent_id, Agent, Participant)
    _may_answer(session, grant, agent.id, agent.status, participant.consent, participant.wrapped_key is not None)
    return agent, participant


def _still_admitted(session: Session, grant: Grant, agent_id: uuid.UUID) -> None:
    """``_admitted``'s checks and lock, reading only the columns they need (no sealed column, no object)."""
    status, consent, has_key = _admission(session, agent_id, Agent.status, Participant.consent,
                                          Participant.wrapped_key.is_not(None))  # fmt: skip
    _may_answer(session, grant, agent_id, status, consent, has_key)


def _admission(session: Session, agent_id: uuid.UUID, *columns: Any) -> tuple[Any, ...]:
    """``columns`` of the agent and its participant in one statement, the participant's row held; read
    anew even when the session holds the objects."""
    row = session.execute(
        select(*columns).join(Participant, Participant.id == Agent.participant_id).where(Agent.id == agent_id)
        .with_for_update(read=True, of=Participant).execution_options(populate_existing=True)
    ).first()  # fmt: skip
    if row is None:
        raise NotFoundError("no such agent")
    return tuple(row)


def _may_answer(session: Session, grant: Grant, agent_id: uuid.UUID, status: AgentStatus, consent: ConsentStatus,
                has_key: bool) -> None:  # fmt: skip
    if status != AgentStatus.ACTIVE or consent != ConsentStatus.CONSENTED or not has_key:
        raise AgentUnavailableError("this agent is not available: superseded, or its participant withdrew")
    if grant.project_id is not None:
        _require_approval(session, grant.project_id, agent_id)


def _instrument_allowed(session: Session, grant: Grant, instrument: Instrument) -> None:
    """A project's own instrument is asked only for that project, in a version its approval names: never
    in the open tier, never for the operator or another project."""
    if split_ref(instrument.key) is None:
        return  # the bank's own instruments
    if grant.tier is not Tier.RESTRICTED or grant.project_id is None:
        raise PermissionDeniedError("a project's own instrument is asked only in that project's approved jobs")
    project = session.get(Project, grant.project_id)
    if project is None or not ProjectScope.stored(project.scope).allows_instrument(instrument.key):
        raise PermissionDeniedError(f"the project is not approved for instrument {instrument.key}")


def _require_approval(session: Session, project_id: uuid.UUID, agent_id: uuid.UUID) -> None:
    """A project's grant holds at the moment of answering, not only when its job was submitted."""
    project = session.get(Project, project_id)
    if project is None or project.status != ProjectStatus.APPROVED:
        raise PermissionDeniedError("the project is no longer approved")
    scope = ProjectScope.stored(project.scope)
    if scope.expired():
        raise PermissionDeniedError("the project's approval has expired")
    if not scope.covers(agent_id):
        raise PermissionDeniedError("the agent is outside the project's approved subset")
