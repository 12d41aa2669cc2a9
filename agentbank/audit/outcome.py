"""What checking the audit log found: each kind of tampering, and what the checked record was worth."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentbank.audit.heads import Head, TreeWalk


@dataclass
class Finding:
    """One way the log differs from what was written."""

    # edited | deleted | reordered | truncated | rewritten | checkpoint_deleted | inconsistent | bad_signature
    # | unreadable | tree_edited | rolled_back (a witness holds a larger log than the bank's records)
    # | outside_differs (an event differs from the tiles kept outside the database)
    kind: str
    seq: int | None
    message: str


@dataclass
class Verification:
    """The outcome of checking the whole log."""

    events: int = 0
    head_seq: int = 0
    checkpoint_seq: int | None = None  # the newest validly signed checkpoint, from anywhere
    outside_seq: int | None = None  # the newest validly signed checkpoint kept outside the database
    uncovered: tuple[int, int] | None = None  # events no outside checkpoint covers yet (first, last)
    unchained: int = 0  # events written whose place in the chain the sequencer has not given yet
    # Rows the sequencer did not place, written with the application's rights (``agentbank.audit.chain``):
    # kept aside on the way in, or placed with a hash that is not their content's. Counted, never findings.
    quarantined: int = 0
    stored: int = 0  # checkpoint rows in the database that a trusted key signed
    ignored: list[int] = field(default_factory=list)  # seqs of checkpoint rows no trusted key signed
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is worth knowing but is not tampering
    heads: list[Head] = field(default_factory=list)  # valid signed tree heads, from anywhere
    tree: TreeWalk | None = None  # the tree as rebuilt from the log

    @property
    def ok(self) -> bool:
        """Whether no tampering was found (which, without an outside record, proves little: ``missing_outside``)."""
        return not self.findings

    @property
    def outside_record(self) -> bool:
        """Whether any validly signed checkpoint kept outside the database was checked against."""
        return self.outside_seq is not None

    def missing_outside(self, where: str) -> str | None:
        """What it means that no outside checkpoint was checked (``where``: the outside file), or None."""
        if self.outside_record:
            return None
        rows = f"; the database holds {self.stored} signed checkpoint(s) not found there" if self.stored else ""
        return (
            f"no checkpoint outside the database ({where} is missing or empty, and no witness copy was given){rows}: "
            "the log cannot be told from one that was cut or rewritten with its chain recomputed"
        )

    @property
    def outside_tree_size(self) -> int | None:
        """The largest signed tree head kept outside the database, or cosigned by a witness; None if none."""
        return max((h.head.size for h in self.heads if h.where != "the database" or h.cosigners), default=None)

    def missing_tree(self) -> str | None:
        """What it means that no signed tree head outside the database was checked, or None."""
        if self.outside_tree_size is not None:
            return None
        return (
            "no signed tree head (a checkpoint with its Merkle root) outside the database: the tree, and so every "
            "inclusion proof, cannot be told from one rebuilt over a rewritten log"
        )

    def witnessed(self, required: int) -> Head | None:
        """The largest head that at least ``required`` distinct witnesses cosigned, or None."""
        enough = [h for h in self.heads if len(h.cosigners) >= required]
        return max(enough, key=lambda h: h.head.size, default=None)
