"""The tiers of the audit log: under what an event happened, one vocabulary for every ``audit.record``.

An agent is asked under one of the first four (the door decides its checks by it, ``consultation.door``);
the others name what is not an agent's answer: an operator's or a coordinator's administration, and what a
participant does with their own interview, portal and data.
"""

from __future__ import annotations

from enum import StrEnum


class Tier(StrEnum):
    """Under what an event happened; stored as its value in ``audit_events.tier``."""

    RESTRICTED = "restricted"  # a team's approved project: individual answers, output-checked
    OPEN = "open"  # the population job and the open tier: answers that only ever leave as protected aggregates
    OPERATOR = "operator"  # the bank's operator asking agents at the command line (survey, ask, demo)
    EVALUATION = "evaluation"  # scoring agents against their people's own answers
    ADMIN = "admin"  # administration: clients, projects, reviews, keys, releases, the log's own upkeep
    PARTICIPANT = "participant"  # a participant's own interview, portal, receipts and withdrawal
