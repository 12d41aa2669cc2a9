"""From an interview to an agent: transcripts stored and read (``ingest``, ``transcripts``), then the build
(``build``: memory chunks, expert reflections, a persona, the deny-list, embeddings) and its progress."""
