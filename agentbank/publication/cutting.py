"""A release of the open tier as a worker cuts it: the cut (if its policy allows) in a transaction of its
own, then, after the commit, the newest release's files on the shelf researchers read.

Workers cut on a schedule, when an operator asks (``releases.request_cut``), and after each agent of a demo
bank; every run also publishes a release whose files are missing, so a crash between the two catches up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.instruments import Instrument, load_instrument
from agentbank.keys.crypto import KeyRing
from agentbank.publication.releases import CutOutcome, Policy, current_release, cut_release
from agentbank.publication.weighting.targets import load_targets

# Under the worker's logger, which the worker's console shows.
log = logging.getLogger("agentbank.runtime.worker.releases")
# The policy a cut is under now, as its transaction sees the bank (a demo bank's own: ``runtime.demo_settings``).
PolicyOf = Callable[[Session], Policy]


def cut_and_publish(
    sessions: sessionmaker[Session], keys: KeyRing, settings: Settings, policy_of: PolicyOf, actor: audit.Actor,
    *, force: bool = False,
) -> CutOutcome:  # fmt: skip
    """Cut a release of the open tier if the policy allows (``force``: an operator's, now), then publish the
    newest release's files; what the cut came to."""
    instruments = _instruments(settings.reference_data_dir)
    with transaction(sessions) as session:
        outcome = cut_release(session, keys, instruments, policy_of(session), actor, force=force,
                              targets=load_targets(settings.weight_targets))  # fmt: skip
    if outcome.release is not None:
        log.info("cut release %d of the open tier (about %d agents)", outcome.release.id, outcome.release.agents)
    else:
        log.info("no new release of the open tier: %s", outcome.reason)
    # After the commit (and on every scheduled run, catching up after a crash): the files researchers read.
    publish_newest(sessions, settings)
    return outcome


def publish_newest(sessions: sessionmaker[Session], settings: Settings) -> int | None:
    """Put the newest release's files on the shelf if they are not there yet (``shelf.ensure_published``);
    the release served, None before the first."""
    with sessions() as session:
        if current_release(session) is None:
            return None
    # Imported here: the files' formats (Parquet, the figures) take most of a second to load, and a bank
    # with no release yet, as every new one is, has none to write.
    from agentbank.publication.shelf import Shelf, ensure_published

    reference = settings.reference_data_dir
    return ensure_published(sessions, Shelf(settings.release_files_path), load_signer(settings),
                            _instruments(reference), reference)  # fmt: skip


def _instruments(reference: Path) -> Callable[[str], Instrument]:
    def load(key: str) -> Instrument:
        return load_instrument(key, reference)

    return load
