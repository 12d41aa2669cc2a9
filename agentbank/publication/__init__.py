"""The open tier: every agent's coded answers (``population``, ``batches``), frozen into releases
(``releases``, ``tables``) of protected, weighted tables (``distributions``, ``suppression``,
``breakdowns``, ``weighting``)."""
