"""The worker's refresh of the bank's validity: when a participant's retest arrives or a retested
participant's agent is rebuilt, the bank's agents are scored again (interview condition beside the
baselines, GSS items), so every card and item figure stays current. Answers already made come from the
agents' cache, so a refresh asks the model only for what is new: the new person, the rebuilt agent.
The operator's full scoring (every condition, Big Five and games) stays `agentbank evaluate --dataset bank`."""

from __future__ import annotations

import logging

from agentbank.providers.chat import ChatModel
from agentbank.runtime.bank import Bank
from evaluation.people.bank import BANK, BANK_ITEMS
from evaluation.people.waves import DatasetError
from evaluation.runs.execute import Models
from evaluation.runs.plan import PlanError
from evaluation.runs.records import BASELINES, DERIVED, RunConfig
from evaluation.service import Outcome, run_evaluation

log = logging.getLogger(__name__)

REFRESH = RunConfig(dataset=BANK, conditions=("interview", *BASELINES, *DERIVED), sample=0, n_items=BANK_ITEMS,
                    reasons=False, traits=False)  # fmt: skip


def refresh_bank_validity(bank: Bank, chat: ChatModel) -> Outcome | None:
    """Score the bank's retested participants' agents again; None when there is nothing to score yet."""
    settings = bank.settings
    embedder = bank.require_models()[1]
    models = Models(chat, embedder, bank.keys, settings.memory_token_budget, bank.keys)
    try:
        outcome = run_evaluation(REFRESH, settings, settings.data_dir / "evaluations", models, bank.sessions)
    except (DatasetError, PlanError) as exc:  # too few retested participants, or items, so far
        log.info("the bank's agents cannot be scored yet: %s", exc.message)
        return None
    log.info("scored the bank's agents again: run %s", outcome.record.run_id)
    return outcome
