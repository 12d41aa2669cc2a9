"""The screen on a team's open questions, before any model is asked: the rules (``rules``) and their
verdict on a question (``screen``)."""
