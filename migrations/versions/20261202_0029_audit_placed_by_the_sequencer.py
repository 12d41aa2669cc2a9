"""Audit events: a place in the chain only from the sequencer, and Merkle leaves over what a participant reads.

The application's role may insert events and give a waiting one its place (the sequencer runs as it), so
a row claiming a place it was never given (a seq far ahead of the head, a junk hash) used to stop every
later checkpoint and proof. Now:

- an event inserted by any role but the owner with ``seq``, ``prev_hash`` or ``hash`` set is *quarantined*
  on the way in: those three are cleared and ``quarantined`` set, so it waits for no place and is never
  chained; ``audit verify`` counts such rows (never shows them);
- a waiting event can be placed only at the head: ``seq`` one past the newest placed event, ``prev_hash``
  that event's hash (genesis for the first). Gaps and forks are refused by the database itself;
- at placement the database stores its own fingerprint of the event's content (``placed_digest``), so a
  row placed with a hash the sequencer never computed (the column grant allows that once) can be told from
  one whose content was edited afterwards: the first is quarantined, the second is an edit;
- ``leaf_version``: the Merkle leaf of events written from now on (2) commits to the event as the
  participant's portal shows it, beside its chain hash. Events written before keep version 1 (the chain
  hash alone): the heads already signed and cosigned over them stay valid, and their content is proven
  only through the chain. The column is not recomputed, on purpose: that would rewrite signed roots.

Old processes must be stopped for this upgrade: their sequencer would grow the tree with version-1 leaves.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UPGRADE = """
ALTER TABLE audit_events ADD COLUMN quarantined boolean NOT NULL DEFAULT false;
ALTER TABLE audit_events ADD COLUMN placed_digest bytea;
ALTER TABLE audit_events ADD COLUMN leaf_version smallint NOT NULL DEFAULT 1;
ALTER TABLE audit_events ALTER COLUMN leaf_version SET DEFAULT 2;
DROP INDEX ix_audit_events_unsequenced;
CREATE INDEX ix_audit_events_unsequenced ON audit_events (id) WHERE seq IS NULL AND NOT quarantined;
CREATE INDEX ix_audit_events_quarantined ON audit_events (id) WHERE quarantined;

CREATE FUNCTION audit_event_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The owner (a migration, a bulk load) writes what it means, and could switch this trigger off anyway.
    IF pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
        RETURN NEW;
    END IF;
    -- Only the sequencer gives a place, after the commit: a row claiming one is kept aside, as evidence.
    NEW.quarantined := NEW.seq IS NOT NULL OR NEW.prev_hash IS NOT NULL OR NEW.hash IS NOT NULL;
    NEW.seq := NULL;
    NEW.prev_hash := NULL;
    NEW.hash := NULL;
    NEW.placed_digest := NULL;
    NEW.leaf_version := 2;
    RETURN NEW;
END $$;
CREATE TRIGGER audit_events_placed_by_the_sequencer BEFORE INSERT ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_event_written();

CREATE OR REPLACE FUNCTION sequence_audit_event_once() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head_seq bigint;
    head_hash bytea;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND OLD.hash IS NULL AND OLD.prev_hash IS NULL AND NOT OLD.quarantined
       AND NEW.seq IS NOT NULL AND NEW.hash IS NOT NULL AND NEW.prev_hash IS NOT NULL
       AND ROW(NEW.id, NEW.created_at, NEW.actor_kind, NEW.actor_id, NEW.action, NEW.tier, NEW.project_id,
               NEW.agent_id, NEW.participant_id, NEW.details, NEW.quarantined, NEW.leaf_version)
           IS NOT DISTINCT FROM
           ROW(OLD.id, OLD.created_at, OLD.actor_kind, OLD.actor_id, OLD.action, OLD.tier, OLD.project_id,
               OLD.agent_id, OLD.participant_id, OLD.details, OLD.quarantined, OLD.leaf_version)
    THEN
        -- The next place, linked to the head: the chain can have no gap and no fork, whoever places.
        SELECT seq, hash INTO head_seq, head_hash FROM audit_events WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1;
        IF NEW.seq <> coalesce(head_seq, 0) + 1
           OR NEW.prev_hash IS DISTINCT FROM coalesce(head_hash, decode(repeat('00', 32), 'hex')) THEN
            RAISE EXCEPTION
                'audit_events: an event is placed at the head only (event %, linked to the hash of event %)',
                coalesce(head_seq, 0) + 1, coalesce(head_seq, 0) USING ERRCODE = 'insufficient_privilege';
        END IF;
        -- The database's own fingerprint of the content: builtins only (jsonb's canonical text, the time in
        -- UTC), so no session setting changes it; agentbank.audit.chain computes the same when verifying.
        NEW.placed_digest := sha256(convert_to(jsonb_build_array(NEW.created_at AT TIME ZONE 'UTC',
            NEW.actor_kind, NEW.actor_id, NEW.action, NEW.tier, NEW.project_id, NEW.agent_id, NEW.participant_id,
            NEW.details, NEW.leaf_version)::text, 'UTF8'));
        RETURN NEW;  -- the sequencer gives a new event its place in the chain, once
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
"""

DOWNGRADE = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_events WHERE quarantined OR (seq IS NOT NULL AND leaf_version <> 1)) THEN
        RAISE EXCEPTION 'the audit log holds quarantined rows or version-2 leaves: the older code would chain the '
            'first and rebuild the tree wrongly over the second';
    END IF;
END $$;
DROP TRIGGER audit_events_placed_by_the_sequencer ON audit_events;
DROP FUNCTION audit_event_written();
CREATE OR REPLACE FUNCTION sequence_audit_event_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND OLD.hash IS NULL AND OLD.prev_hash IS NULL
       AND NEW.seq IS NOT NULL AND NEW.hash IS NOT NULL AND NEW.prev_hash IS NOT NULL
       AND ROW(NEW.id, NEW.created_at, NEW.actor_kind, NEW.actor_id, NEW.action, NEW.tier, NEW.project_id,
               NEW.agent_id, NEW.participant_id, NEW.details)
           IS NOT DISTINCT FROM
           ROW(OLD.id, OLD.created_at, OLD.actor_kind, OLD.actor_id, OLD.action, OLD.tier, OLD.project_id,
               OLD.agent_id, OLD.participant_id, OLD.details)
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
DROP INDEX ix_audit_events_quarantined;
DROP INDEX ix_audit_events_unsequenced;
CREATE INDEX ix_audit_events_unsequenced ON audit_events (id) WHERE seq IS NULL;
ALTER TABLE audit_events DROP COLUMN leaf_version;
ALTER TABLE audit_events DROP COLUMN placed_digest;
ALTER TABLE audit_events DROP COLUMN quarantined;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
