"""What a summary told back may say: only what the person said, to them, and the person's own words when the
model's do not hold to that.

A small model asked to summarise wanders: on the embedded model, of six summaries of two answers about a fishing
town, one kept to what was said, the others added a chef, a friend named Robin or a fishing boat, or spoke as the
person ("I grew up..."). Telling someone back what they never said is worse than saying nothing, so each sentence
is kept only if it speaks to the person (no "I", "my", "we") and every word that carries content is one they
said (``grounded``). When the model wrote something and none of it holds, the interviewer tells back the
first sentence of up to three of the person's answers, turned to the second person (``in_their_words``).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're",
                           "we've", "we'd", "we'll", "us", "our", "ours", "ourselves"})  # fmt: skip
# Words a summary may use that the person need not have said: its framing, pronouns and grammar.
_FRAME = frozenset(
    """
a an the and or but nor so yet of in on at to for with from by into onto about as than then that this these those
there here it its it's is are was were be been being am has have had do does did will would can could may might
shall should must not no you your yours yourself yourselves you're you've you'd you'll told tell telling said say
saying mentioned shared talked spoke described also too very really just all both each some many much more most
he she him her his hers they them their theirs who whom whose which what when where while how why one two three
after before during since until up down out over under again once still ever never always often
""".split()
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_TOLD_ME = re.compile(r"\b(told|tell|telling|shared with|said to) me\b")
_SWAPS = [  # order matters: the pairs first
    (r"\bI was\b", "you were"), (r"\bI am\b", "you are"), (r"\bI'm\b", "you're"), (r"\bI've\b", "you've"),
    (r"\bI'd\b", "you'd"), (r"\bI'll\b", "you'll"), (r"\bI\b", "you"), (r"\bmyself\b", "yourself"),
    (r"\bmine\b", "yours"), (r"\bmy\b", "your"), (r"\bme\b", "you"), (r"\bwe're\b", "you're"),
    (r"\bwe've\b", "you've"), (r"\bwe'd\b", "you'd"), (r"\bwe'll\b", "you'll"), (r"\bwe\b", "you"),
    (r"\bourselves\b", "yourselves"), (r"\bours\b", "yours"), (r"\bour\b", "your"), (r"\bus\b", "you"),
]  # fmt: skip
# A first sentence longer than this is told back only up to its first comma after this many words.
LONGEST_WORDS = 30


def _stem(word: str) -> str:
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def grounded(sentence: str, answers: list[str]) -> bool:
    """Whether ``sentence`` speaks to the person and says nothing they did not: each of its content words is
    one of theirs (give or take an ending)."""
    # "You told me" is the interviewer's framing, its one "me".
    said = _TOLD_ME.sub(" ", sentence.casefold().replace("\u2019", "'"))
    words = _WORD.findall(said)
    if not words or _FIRST_PERSON & set(words):
        return False
    theirs = {_stem(w) for a in answers for w in _WORD.findall(a.casefold().replace("\u2019", "'"))}
    return all(_stem(w) in theirs for w in words if w not in _FRAME)


def second_person(text: str) -> str:
    """``text`` said back to the one who said it: "I grew up" as "you grew up"."""
    for pattern, swap in _SWAPS:
        text = re.sub(pattern, swap, text, flags=re.IGNORECASE)
    return text


def in_their_words(answers: list[str], most: int = 3) -> str:
    """The first sentence of each of the first ``most`` answers, told back in the second person."""
    told: list[str] = []
    for answer in answers:
        first = next((s.strip() for s in _SENTENCE.findall(answer) if s.strip()), "")
        words = first.split()
        if len(words) > LONGEST_WORDS:
            head = " ".join(words[:LONGEST_WORDS])
            first = head.split(",")[0] if "," in head else head
        first = second_person(first.rstrip(".!?,;: "))
        if first:
            told.append(first[0].lower() + first[1:] if not first.startswith("I ") else first)
        if len(told) == most:
            break
    if not told:
        return ""
    lead, *rest = told
    return " ".join([f"You told me that {lead}.", *(f"And that {t}." for t in rest)])
