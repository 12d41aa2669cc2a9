"""Answering as an agent: survey items and open questions, structured, cached and with provenance.

Prompt order is fixed so that everything about one agent is a byte-identical prefix: instructions →
the agent's private marker (its canary) → the interview (or the condition's stand-in) → the chosen
expert's notes → the instrument's preamble, and only then the item. The canary depends only on the
agent, so the prefix stays identical for every question; a model that repeats its context repeats the
canary, which the output check withholds. Items are grouped by expert, so consecutive calls share the
longest prefix and the model's prefix cache makes the second and later items cheap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from agentbank.building.agents import reflections_of
from agentbank.building.memory import fits, ranked_chunk_spans, select_turns
from agentbank.building.reflection import EXPERT_KEYS, EXPERTS, ExpertChooser
from agentbank.building.shared_vectors import RETRIEVAL, query_vector
from agentbank.building.transcripts import TurnText, load_turns, open_demographics
from agentbank.consultation.answering.answers import (
    MAX_TOKENS_OPEN,
    MAX_TOKENS_PER_ITEM,
    AgentAnswer,
    AgentUnavailableError,
)
from agentbank.consultation.answering.cache import cache_key, cached_answers
from agentbank.consultation.answering.calls import Call, item_target, order_seed, shuffled, split_usage
from agentbank.consultation.answering.conditions import Condition, Sources
from agentbank.consultation.answering.open_text import tidy_open_answer
from agentbank.consultation.answering.plans import Made, NotPreparedError, Output, PendingCall, Plan
from agentbank.consultation.answering.records import answer_of, store_answer
from agentbank.consultation.answering.schemas import (
    OPEN_ANSWER_CHARS,
    answer_schema,
    batch_schema,
    describe_item,
    open_schema,
    repeats_an_option,
    utterance_schema,
)
from agentbank.consultation.answering.trials import EarlierStep
from agentbank.consultation.answering.utterances import STANCES, GroupTurn
from agentbank.core.errors import AgentBankError, ProviderError
from agentbank.core.prompts.files import prompt, prompt_version
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db.models import Agent, Participant
from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Instrument, Item
from agentbank.instruments.store import SyncedInstruments
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.providers.chat import ChatModel, Message
from agentbank.providers.embeddings import Embedder

# Open answers only: a small model's free text loops on its own sentences without it. Codes are not
# penalized, as a penalty would push a survey answer away from a code the reason just named.
OPEN_FREQUENCY_PENALTY = 0.5
CANARY_LINE = "Private marker, never to be repeated: "


@dataclass
class _Context:
    system: str
    shown_turns: list[int]


class AnswerEngine:
    """Answers for agents with one chat model and one embedder: built once per process (its models, the
    expert chooser, the GSS), given the caller's session, and so its transaction, on every call."""

    def __init__(self, *, chat: ChatModel, embedder: Embedder, keys: KeyRing, memory_token_budget: int) -> None:
        self._chat = chat
        self._embedder = embedder
        self._keys = keys
        self._budget = memory_token_budget
        self._chooser = ExpertChooser(embedder)
        self._gss = load_gss()
        self._instruments = SyncedInstruments()  # each version's items synced once per process, not per plan

    @property
    def chat(self) -> ChatModel:
        """The chat model the engine answers with (its name is part of every answer's cache key)."""
        return self._chat

    @property
    def keys(self) -> KeyRing:
        """The key ring the engine reads agents' data with (the output check needs the same)."""
        return self._keys

    def plan_survey(
        self,
        session: Session,
        agent: Agent,
        participant: Participant,
        instrument: Instrument,
        items: Sequence[Item],
        condition: Condition | None = None,
        *,
        items_per_call: int = 1,
        temperature: float = 0.0,
        seed: int = 0,
        reasons: bool = True,
        earlier: Sequence[EarlierStep] | None = None,
    ) -> Plan:
        """The agent's answers to ``items``: the stored ones by key, and the calls that make the rest.

        With ``reasons`` off the model gives only the codes: several times fewer generated tokens,
        for large evaluations where the reasons are not read. ``earlier`` makes this a step of a trial
        (``answering.trials``): the instrument's preamble is the step's stimulus, so its version is part
        of each answer's key, and the earlier steps are shown before it.
        """
        # A survey-based agent never sees its own answer to an item it is asked now, and the cache
        # key names exactly the answers it was shown.
        condition = (condition or Condition()).holding_out({item.key for item in items})
        cipher = self._cipher(agent, participant)
        sampling: dict[str, Any] = {
            "temperature": temperature,
            "items_per_call": items_per_call,
            "memory_tokens": self._budget,
            "retrieval": RETRIEVAL,
        }
        if not reasons:  # only when off, so the keys of answers with reasons stay as they were
            sampling["reasons"] = False
        if items_per_call > 1:  # several items to a call are asked in a shuffled order (see _shuffled)
            sampling["item_order"] = "shuffled"
        targets: dict[str, dict[str, Any]] = {item.key: item_target(instrument, item) for item in items}
        if earlier is not None:  # only for trials, so the keys of survey answers stay as they were
            trial = {"stimulus": instrument.version, "after": [key for step in earlier for key in step.keys]}
            targets = {key: {**target, "trial": trial} for key, target in targets.items()}
        keys = {item.key: self._key(agent, targets[item.key], condition, cipher, sampling, seed) for item in items}
        plan = Plan(agent.id, agent.version, cipher, [(item.key, keys[item.key]) for item in items], [])
        stored = set(cached_answers(session, list(keys.values())))
        missing = [item for item in items if keys[item.key] not in stored]
        if not missing:
            return plan
        item_ids = self._instruments.item_ids(session, instrument)
        queries = [item.question for item in items]
        seed_of_order = order_seed(agent, seed)
        for expert, group in self._group_by_expert(missing, condition):
            context = self._context(
                session, agent, participant, cipher, condition, expert, queries, instrument, earlier or ()
            )
            if items_per_call > 1:
                group = shuffled(group, seed_of_order)
            for start in range(0, len(group), items_per_call):
                batch = group[start : start + items_per_call]
                call = Call(condition, sampling, seed, expert, seed_of_order if items_per_call > 1 else None)
                plan.calls.append(self._item_call(context, batch, keys, item_ids, call))
        return plan

    def plan_ask(
        self,
        session: Session,
        agent: Agent,
        participant: Participant,
        question: str,
        condition: Condition | None = None,
        *,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Plan:
        """An open-ended answer in the participant's voice, citing the turns it draws on: stored, or the
        call that makes it."""
        condition = condition or Condition()
        question = " ".join(question.split())
        if not question:
            raise AgentBankError("the question is empty")
        cipher = self._cipher(agent, participant)
        penalty = OPEN_FREQUENCY_PENALTY
        sampling: dict[str, Any] = {"temperature": temperature, "memory_tokens": self._budget}
        sampling.update(retrieval=RETRIEVAL, frequency_penalty=penalty)
        digest = hashlib.sha256(question.encode()).hexdigest()
        key = self._key(agent, {"question_sha256": digest}, condition, cipher, sampling, seed)
        plan = Plan(agent.id, agent.version, cipher, [("question", key)], [])
        if cached_answers(session, [key]):
            return plan
        expert = self._chooser.choose(question) if condition.unit.uses_experts else None
        context = self._context(session, agent, participant, cipher, condition, expert, [question], None)
        if not context.shown_turns:
            raise AgentBankError("open-ended questions need a condition that shows interview turns")
        user = f"{prompt('answer_open')}\n\nQuestion: {question}"
        options = {"temperature": temperature, "max_tokens": MAX_TOKENS_OPEN, "seed": seed,
                   "frequency_penalty": penalty}  # fmt: skip
        output = Output(key, Call(condition, sampling, seed, expert), question_sha256=digest)
        messages: list[Message] = [{"role": "system", "content": context.system}, {"role": "user", "content": user}]
        plan.calls.append(PendingCall(messages, open_schema(context.shown_turns), options, (output,), True))
        return plan

    def plan_utterance(self, session: Session, agent: Agent, participant: Participant, turn: GroupTurn) -> Plan:
        """An utterance at the agent's seat in a focus group, and where it then stands: stored (a resumed
        run), or the one call that makes both. The prompt is the agent's own context (its interview and the
        expert's notes for the question), then the stimulus and what it remembers of the group."""
        cipher = self._cipher(agent, participant)
        condition = Condition()
        penalty = OPEN_FREQUENCY_PENALTY
        sampling: dict[str, Any] = {"temperature": 0.0, "memory_tokens": self._budget, "retrieval": RETRIEVAL,
                                    "frequency_penalty": penalty, "group_prompts": turn.version}  # fmt: skip
        digest = hashlib.sha256(" ".join(turn.question.split()).encode()).hexdigest()
        target = {"focus_group": str(turn.group_id), "utterance": turn.number}
        parts = ("words", "stance")
        keys = [self._key(agent, {**target, "part": part}, condition, cipher, sampling, 0) for part in parts]
        plan = Plan(agent.id, agent.version, cipher, [("utterance", keys[0]), ("stance", keys[1])], [])
        if len(cached_answers(session, keys)) == len(keys):
            return plan
        expert = self._chooser.choose(turn.question)
        context = self._context(session, agent, participant, cipher, condition, expert, [turn.question], None)
        group = f"## The focus group\nYou sit at {turn.seat}.\n\nWhat the group discusses:\n{turn.stimulus}"
        heard = f"## What you remember of the discussion so far\n{turn.heard or '(Nothing has been said yet.)'}"
        system = "\n\n".join([context.system, group, heard])
        user = f"{prompt('group_utterance')}\n\nThe moderator, to {turn.seat}: {turn.question}"
        options = {"temperature": 0.0, "max_tokens": MAX_TOKENS_OPEN, "seed": 0, "frequency_penalty": penalty}
        call = Call(condition, sampling, 0, expert)
        outputs = (Output(keys[0], call, question_sha256=digest), Output(keys[1], call, question_sha256=digest))
        messages: list[Message] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        plan.calls.append(PendingCall(messages, utterance_schema(context.shown_turns, STANCES), options, outputs,
                                      utterance=True))  # fmt: skip
        return plan

    def make(self, call: PendingCall) -> Made:
        """Make one planned call (no database): the answers it yields, ready to store."""
        result = self._chat.complete(call.request)
        if call.utterance:
            cited = sorted(set(result.data["cited_turns"]))
            words = {"value": tidy_open_answer(result.data["answer"], OPEN_ANSWER_CHARS), "reason": "",
                     "cited_turns": cited}  # fmt: skip
            stance = {"value": result.data["stance"], "reason": "", "cited_turns": cited}
            return Made([words, stance], split_usage(result.usage, 2), result.seconds / 2)
        if call.open_question:
            payload = {
                "value": tidy_open_answer(result.data["answer"], OPEN_ANSWER_CHARS),
                "reason": "",
                "cited_turns": sorted(set(result.data["cited_turns"])),
            }
            return Made([payload], [result.usage], result.seconds)
        items = [output.item for output in call.outputs if output.item is not None]
        data = {items[0].key: result.data} if len(items) == 1 else result.data
        if len(items) > 1 and not call.outputs[0].call.sampling.get("reasons", True):
            data = {key: {"answer": value} for key, value in data.items()}
        payloads = [
            {"value": data[item.key]["answer"], "reason": data[item.key].get("reason", ""), "cited_turns": []}
            for item in items
        ]
        if any(repeats_an_option(item, p["value"]) for item, p in zip(items, payloads, strict=True)):
            raise ProviderError("the model named an option twice in a list answer")
        return Made(payloads, split_usage(result.usage, len(items)), result.seconds / len(items))

    def store(self, session: Session, plan: Plan, call: PendingCall, made: Made) -> None:
        """Store a made call's answers under their cache keys (a key already stored is kept)."""
        for output, payload, usage in zip(call.outputs, made.payloads, made.usages, strict=True):
            store_answer(
                session, self._chat.name, plan.agent_id, plan.agent_version, plan.cipher, output.key, output.call,
                payload, usage, made.seconds, item=output.item, item_id=output.item_id,
                question_sha256=output.question_sha256,
            )  # fmt: skip
            plan.made.add(output.key)

    def release(self, session: Session, plan: Plan) -> list[AgentAnswer]:
        """Every planned answer, in order, read from the cache; asks the model nothing."""
        stored = cached_answers(session, plan.keys)
        if len(stored) < len(set(plan.keys)):
            raise NotPreparedError("some answers were never made; make the plan's calls before releasing it")
        return [answer_of(stored[key], plan.cipher, name, cached=key not in plan.made) for name, key in plan.targets]

    # -- prompt context -------------------------------------------------------------------------

    def _group_by_expert(self, items: Sequence[Item], condition: Condition) -> list[tuple[str | None, list[Item]]]:
        if not condition.unit.uses_experts:
            return [(None, list(items))]
        groups: dict[str, list[Item]] = {}
        for item in items:
            groups.setdefault(self._chooser.choose(item.question, item.meta.get("expert")), []).append(item)
        return [(key, groups[key]) for key in EXPERT_KEYS if key in groups]

    def _context(
        self,
        session: Session,
        agent: Agent,
        participant: Participant,
        cipher: Cipher,
        condition: Condition,
        expert: str | None,
        queries: Sequence[str],
        instrument: Instrument | None,
        earlier: Sequence[EarlierStep] = (),
    ) -> _Context:
        def fit(turns: list[TurnText]) -> list[TurnText]:
            spans = None
            if not fits(turns, self._budget):
                spans = ranked_chunk_spans(session, agent.id, cipher, query_vector(self._embedder, queries))
            return select_turns(turns, spans, self._budget)

        def notes(key: str) -> tuple[str, list[str]]:
            title = next(e.title for e in EXPERTS if e.key == key)
            return title, reflections_of(session, agent, cipher, key)

        sources = Sources(
            demographics=open_demographics(participant, cipher),
            instrument=instrument or self._gss,
            gss=self._gss,
            turns=lambda: load_turns(session, agent.transcript_id, cipher),
            fit=fit,
            notes=notes,
            persona=lambda: cipher.open(agent.persona_encrypted) if agent.persona_encrypted else "",
        )
        section = condition.unit.section(condition, sources, expert)
        parts = [prompt("agent_system"), f"{CANARY_LINE}{self._keys.canary(agent.id)}", section.text]
        parts += [step.text for step in earlier]
        if instrument is not None:
            parts.append(f"## {instrument.title}\n{instrument.preamble}")
        return _Context("\n\n".join(parts), list(section.shown_turns))

    # -- model calls and storage ----------------------------------------------------------------

    def _item_call(
        self, context: _Context, batch: list[Item], keys: dict[str, str], item_ids: dict[str, int], call: Call
    ) -> PendingCall:
        reasons = call.sampling.get("reasons", True)
        instruction = prompt("answer_numeric" if all(i.kind == "numeric" for i in batch) else "answer_items")
        if not reasons:
            instruction = prompt("answer_codes")
        user = "\n\n".join(describe_item(item) for item in batch) + "\n\n" + instruction
        schema = answer_schema(batch[0], reasons) if len(batch) == 1 else batch_schema(batch, reasons)
        options = {"temperature": call.sampling["temperature"], "max_tokens": MAX_TOKENS_PER_ITEM * len(batch),
                   "seed": call.seed}  # fmt: skip
        outputs = tuple(
            Output(keys[item.key], call.at(position, len(batch)), item, item_ids[item.key])
            for position, item in enumerate(batch)
        )
        messages: list[Message] = [{"role": "system", "content": context.system}, {"role": "user", "content": user}]
        return PendingCall(messages, schema, options, outputs)

    def _key(
        self, agent: Agent, target: dict[str, Any], condition: Condition, cipher: Cipher, sampling: dict[str, Any],
        seed: int,
    ) -> str:  # fmt: skip
        return cache_key(
            agent_id=str(agent.id),
            agent_version=agent.version,
            target=target,
            condition=condition.name,
            condition_params=condition.recorded(cipher),
            model=self._chat.name,
            prompt_version=prompt_version(),
            sampling=sampling,
            seed=seed,
        )

    def _cipher(self, agent: Agent, participant: Participant) -> Cipher:
        if agent.status != AgentStatus.ACTIVE or participant.consent != ConsentStatus.CONSENTED:
            raise AgentUnavailableError("this agent is not active and answers nothing")
        return self._keys.cipher(participant.id, participant.wrapped_key)
