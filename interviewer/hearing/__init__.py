"""Hearing a spoken answer: its frames decoded as they come, voice activity, the end of the turn, and the
recording transcribed ahead while the person speaks."""
