"""What the interviewer says next: the prompts, the engine's decisions, deciding ahead, and the notes."""
