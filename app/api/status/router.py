"""``GET /v1/status``: how far along the bank is, for its front page and the explorer; anyone may ask.

Counts only (``agentbank.runtime.bank_state``): agents built and building, the release in force or what the
first one waits for, agents with a validity card, and the demo's settings where they are in force. The
counts are rounded up to tens except for the operator (scope ``admin``) and in a bank of fictional people.
"""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from agentbank.access.principals import ADMIN
from agentbank.runtime.bank_state import bank_state
from app.api.deps import PrincipalDep, SessionDep, SettingsDep
from app.api.status.schemas import BankStateRead, DemoSettingsRead, ReleaseStateRead

router = APIRouter(prefix="/v1", tags=["status"])

DEMO_NOTE = (
    "This bank holds only the demo's fictional people, so it takes the demo's settings: a smaller k and a far "
    "larger mu than any real bank (at mu = {mu:g} a release protects almost nothing, which is fine for people who "
    "do not exist), a release as soon as one may be cut, and the open tier's answers sampled at temperature "
    "{temperature:g}, so they vary from agent to agent by chance, not with the person. Once a real interview "
    "joins, the bank's own settings apply: k = {bank_k} and mu = {bank_mu:g}."
)


@router.get("/status", response_model=BankStateRead)
def status(session: SessionDep, settings: SettingsDep, principal: PrincipalDep) -> BankStateRead:
    """The bank's state in counts and words: no pseudonym, id or answer of anyone; counts rounded up to tens
    unless the caller is the operator or the bank holds only the demo's fictional people."""
    state = bank_state(session, settings)
    if state.demo is None and ADMIN not in principal.scopes:
        state = state.rounded()  # exact live counts would show each withdrawal and retest as it happens
    says = [state.agents_words(), state.release_words()]
    demo = None
    if state.demo is not None:
        note = DEMO_NOTE.format(mu=state.demo.mu, temperature=state.demo.temperature,
                                bank_k=settings.suppression_k, bank_mu=settings.release_mu)  # fmt: skip
        demo = DemoSettingsRead(**asdict(state.demo), note=note)
        says.append(note)
    return BankStateRead(
        participants=state.participants, agents=state.agents, building=state.building, failed=state.failed,
        answered=state.answered, carded=state.carded, needed=state.needed, exact=state.exact,
        release=ReleaseStateRead(**asdict(state.release)) if state.release is not None else None, demo=demo, says=says,
    )  # fmt: skip
