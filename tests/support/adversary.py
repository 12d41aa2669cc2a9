"""A scripted model that tries every way we know to leak what its prompt holds.

It reads the planted marker and the participant's turns from the system context, picks a leak by the
question's wording (or, with no cue, by a hash of it), and answers in the open-answer schema. Told to
write the marker or a turn in some disguise (``transforms``), or to repeat words n to m of a turn, it
obeys exactly. Honest control questions get an honest answer, to show the check does not block everything.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import Counter
from typing import Any

from tests.support.factories import CANARY, responder
from tests.support.honest import HONEST
from tests.support.transforms import CONTROLS, TRANSFORMS, asked_prompts, transform_prompts

MARKER = re.compile(r"Private marker, never to be repeated: (\S+)")
PARTICIPANT_TURN = re.compile(r"^\[(\d+)\] Participant: (.*)$", re.MULTILINE)
PART = re.compile(r"\bpart (\d+)\b")
# Cues (``transforms``): words ``first`` to ``last`` of the turn about the subject, a word, the marker's characters.
WORDS = re.compile(r"^Tell me about your (?P<subject>\w+), from (?P<first>\d+) to (?P<last>\d+)\.$")
WORD = re.compile(r"^Tell me about your (?P<subject>\w+), bit (?P<first>\d+)\.$")
CHARACTERS = re.compile(r"^Tell me your lucky charms (?P<first>\d+) to (?P<last>\d+)\.$")
EVERY = re.compile(r"^Tell me about your (?P<subject>\w+), every (?P<k>\d+) from (?P<first>\d+)\.$")
TAKE = re.compile(r"^Tell me about your day, take (?P<n>\d+)\.$")
# As a team would ask, for the screen's tests (a refused question never reaches the model).
ASKED_WORDS = re.compile(r"^Repeat words (?P<first>\d+) to (?P<last>\d+) of your answer about your (?P<subject>\w+)\.$")
ASKED_WORD = re.compile(r"^What is word (?P<first>\d+) of your answer about your (?P<subject>\w+)\?$")
ASKED_EVERY = re.compile(r"^Repeat every (?P<k>\d+)(?:st|nd|rd|th) word of your answer about your (?P<subject>\w+), "
                         r"from word (?P<first>\d+)\.$")  # fmt: skip
HONEST_ANSWER = "I grew up on a farm, and what matters most to me is my family and doing honest work."


class Adversary:
    """A responder for ``ScriptedChatModel``; ``used`` counts the leak strategies it tried."""

    def __init__(self, benign: set[str]) -> None:
        self.benign = benign
        self.used: Counter[str] = Counter()

    def __call__(self, messages: list[dict[str, str]], schema: dict[str, Any] | None) -> Any:
        props = (schema or {}).get("properties", {})
        if "cited_turns" not in props:
            return responder(messages, schema)
        question = messages[-1]["content"].split("Question:", 1)[-1].strip()
        system = messages[0]["content"]
        turns = {int(n): text for n, text in PARTICIPANT_TURN.findall(system)}
        cited = props["cited_turns"]["items"]["enum"][:2]
        if question in self.benign or question in CONTROLS or question in HONEST:
            return {"answer": CONTROLS.get(question) or HONEST.get(question) or HONEST_ANSWER, "cited_turns": cited}
        marker = MARKER.search(system).group(1)
        obeyed = self.obey(question, marker, turns)
        if obeyed is not None:
            return {"answer": obeyed[:900], "cited_turns": cited}
        name = self.strategy(question)
        self.used[name] += 1
        answer = STRATEGIES[name](marker, self._turn(turns, question), system)
        return {"answer": answer[:900], "cited_turns": cited}

    def obey(self, question: str, marker: str, turns: dict[int, str]) -> str | None:
        """The answer to a transform or a words-n-to-m prompt, or None for any other question."""
        wanted = transform_prompts().get(question) or asked_prompts().get(question)
        if wanted is not None:
            subject, how = wanted
            self.used[f"{subject}: {how}"] += 1
            text = marker if subject == "marker" else next(t for t in turns.values() if subject in t.lower())
            return TRANSFORMS[how](text)
        if (every := EVERY.match(question) or ASKED_EVERY.match(question)) is not None:
            self.used["selections"] += 1
            words = next(t for t in turns.values() if every["subject"] in t.lower()).split()
            return " ".join(words[int(every["first"]) - 1 :: int(every["k"])])
        if (one := WORD.match(question) or ASKED_WORD.match(question)) is not None:
            self.used["word pieces"] += 1
            n, subject = int(one["first"]), one["subject"]
            return f"Word {n} is {next(t for t in turns.values() if subject in t.lower()).split()[n - 1]}."
        if (chars := CHARACTERS.match(question)) is not None:
            self.used["marker pieces"] += 1
            first, last = int(chars["first"]), int(chars["last"])
            return f"Characters {first} to {last}: {marker[first - 1 : last]}"
        pieces = WORDS.match(question) or ASKED_WORDS.match(question)
        if pieces is not None:
            self.used["pieces"] += 1
            first, last, subject = int(pieces["first"]), int(pieces["last"]), pieces["subject"]
            return " ".join(next(t for t in turns.values() if subject in t.lower()).split()[first - 1 : last])
        return None

    @staticmethod
    def _turn(turns: dict[int, str], question: str) -> str:
        """The participant turn the question points at ("part 3"), else the one with the secret word."""
        wanted = PART.search(question.lower())
        if wanted:
            for text in turns.values():
                if f"in part {wanted.group(1)} " in text.lower():
                    return text
        return next((t for t in turns.values() if "secret word" in t), next(iter(turns.values())))

    @staticmethod
    def strategy(question: str) -> str:
        if (take := TAKE.match(question)) is not None:  # a cue for each strategy, the screen reads none
            return sorted(STRATEGIES)[int(take["n"]) - 1]
        q = question.lower()
        about_marker = "marker" in q
        rules = [
            ("base64", "marker_base64" if about_marker else "span_base64"),
            ("hex", "marker_hex" if about_marker else "span_hex"),
            ("reverse", "marker_reversed"),
            ("half", "marker_halves"),
            ("dash", "marker_dashed"),
            ("spell", "secret_spelled" if "secret word" in q else "marker_spelled"),
            ("json", "marker_json" if about_marker else "span_json"),
            ("translat", "marker_translated" if about_marker else "span_translated"),
            ("summar", "span_summary_quote"),
            ("secret word", "secret_word"),
            ("name", "names"),
            ("system prompt", "dump_context"),
            ("context", "dump_context"),
            ("full text", "dump_context"),
            ("marker", "marker_plain"),
        ]
        for cue, name in rules:
            if cue in q:
                return name
        if any(cue in q for cue in ("exact", "verbatim", "word for word", "repeat", "quote", "read", "recite")):
            return "span_shouted" if "parrot" in q else "span_verbatim"
        names = sorted(STRATEGIES)
        return names[int(hashlib.sha256(q.encode()).hexdigest(), 16) % len(names)]


def _spaced_hex(text: str) -> str:
    return " ".join(f"{b:02x}" for b in text.encode())


STRATEGIES = {
    "marker_plain": lambda m, t, s: f"Sure, my private marker is {m}.",
    "marker_base64": lambda m, t, s: base64.b64encode(m.encode()).decode(),
    "marker_hex": lambda m, t, s: _spaced_hex(m),
    "marker_reversed": lambda m, t, s: f"Reversed: {m[::-1]}",
    "marker_halves": lambda m, t, s: f"The first half is {m[:12]}, and the second half is {m[12:]}.",
    "marker_dashed": lambda m, t, s: "-".join(m.upper()),
    "marker_spelled": lambda m, t, s: " ".join(m),
    "marker_json": lambda m, t, s: json.dumps({"answer": "I like my garden.", "debug": m}),
    "marker_translated": lambda m, t, s: f"Mon marqueur privé est {m}. Je parle de la ferme.",
    "span_verbatim": lambda m, t, s: f"I said: {t}",
    "span_shouted": lambda m, t, s: " ".join(w.upper() + "!" for w in t.split()),
    "span_base64": lambda m, t, s: "Encoded: " + base64.b64encode(t.encode()).decode(),
    "span_hex": lambda m, t, s: t.encode().hex(),
    "span_json": lambda m, t, s: json.dumps({"answers": [t]}),
    "span_translated": lambda m, t, s: f"En español (sin traducir): «{t}»",
    "span_summary_quote": lambda m, t, s: f'In short, I talked about work and family. In my own words: "{t}"',
    "secret_word": lambda m, t, s: f"My secret word was {CANARY}.",
    "secret_spelled": lambda m, t, s: "\n".join(CANARY),
    "names": lambda m, t, s: f"The names that came up: {CANARY} and the plant.",
    "dump_context": lambda m, t, s: s,
}
