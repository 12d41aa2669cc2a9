"""The tamper-evident audit log: events chained in order (``log``, ``sequencer``), signed checkpoints kept
outside the database (``checkpoints``, ``signing_keys``, ``trust``), and their verification."""
