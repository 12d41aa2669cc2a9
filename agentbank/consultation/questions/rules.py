"""The registry of question-screening rules: what a team may not ask an agent for.

Each rule names one way of asking for the interview's words rather than for the person's views: by
their position, spelled out, encoded, translated, reversed, quoted verbatim, or the agent's own
instructions and private marker. A rule has *strong* patterns, enough on their own ("word 17",
"base64", "verbatim"), and *weak* ones ("spell", "repeat", "translate"), which refuse a question only
beside a reference to the interview's words ("your interview", "what you said", "part 3", "the
marker"); a weak pattern alone holds the answer for a reviewer instead, since honest questions use
those words too ("How would you translate your values into advice?").

Patterns match the question's canonical words (``output_check.canonical``: look-alike letters,
accents and zero-width characters undone, case folded, punctuation as spaces), so "Vérbatim",
"word‑for‑word" and "w o r d 17" read as written plainly. A rule is refused by name; the names are
stable, since they are stored with audit events and shown to teams.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A reference to the interview's words, or to what the agent was told and must not repeat.
REFERENCE = re.compile(
    r"\b(?:interview|interviews|transcript|recording|tape|participant|part \d+|secret word|passphrase"
    r"|(?:your|the|my) (?:answers?|words|story|account|marker|instructions|prompt|context)"
    r"|(?:what|everything|anything|all|things) (?:that )?you (?:said|told|wrote|mentioned|say)"
    r"|you (?:said|told|mentioned|wrote)|the interviewer)\b"
)


@dataclass(frozen=True)
class Rule:
    """One way of asking for the interview's words, refused (strong, or weak beside a reference) or held."""

    name: str
    refuses: str  # what the rule refuses, for the team's error message
    strong: tuple[re.Pattern[str], ...]
    weak: tuple[re.Pattern[str], ...] = ()


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source) for source in sources)


_UNIT = r"(?:word|words|letter|letters|character|characters|char|chars|sentence|sentences|line|lines)"
_ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|next|previous|final)"

RULES: tuple[Rule, ...] = (
    Rule(
        "words_by_position",
        "asks for the interview's words by their position (word 17, the odd words, words 3 to 8)",
        _patterns(
            rf"\b{_UNIT} (?:no |number |num )?\d+\b",
            rf"\b\d+ ?(?:st|nd|rd|th) {_UNIT}\b",
            rf"\b(?:odd|even)(?: numbered)? {_UNIT}\b",
            rf"\bevery (?:other|second|third|fourth|fifth|\d+ ?(?:st|nd|rd|th)?) {_UNIT}\b",
            rf"\b(?:first|last|next|final) \d+ {_UNIT}\b",
            rf"\b{_UNIT} (?:at|in) (?:position|place)s?\b",
        ),
        _patterns(rf"\b{_ORDINAL} {_UNIT}\b", rf"\b{_UNIT} by position\b"),
    ),
    Rule(
        "spelling",
        "asks for the interview's words spelled out (letter by letter, a spelling alphabet, Morse)",
        _patterns(
            r"\b(?:letter|character) by (?:letter|character)\b",
            r"\bone (?:letter|character) (?:per|a|at a) (?:line|time)\b",
            r"\b(?:nato|phonetic|spelling|radio) alphabet\b",
            r"\balfa\b.*\bbravo\b",
            r"\bwith (?:spaces|dashes|dots|hyphens|commas|underscores) between\b",
            r"\bmorse\b",
            r"\bspell(?:ed|ing|s)? (?:out|it|the|your|each|every)\b.*\b(?:marker|secret|word|words|name|names)\b",
        ),
        _patterns(r"\bspell"),
    ),
    Rule(
        "encoding",
        "asks for the interview's words encoded (base64, hex, binary, a cipher, leetspeak, a word game)",
        _patterns(
            r"\bbase ?(?:64|32|16|85)\b",
            r"\bhex(?:adecimal)?\b",
            r"\bbinary\b",
            r"\brot ?\d+\b",
            r"\b(?:caesar|atbash|vigenere)\b",
            r"\bcipher",
            r"\bencrypt",
            r"\bencod",
            r"\bleet(?:speak)?\b|\b1337\b",
            r"\bpig latin\b",
            r"\bubbi dubbi\b",
            r"\b(?:ascii|unicode|character|char) (?:codes?|values?|points?)\b",
            r"\burl ?encod",
            r"\bhtml (?:character )?entit",
            r"\b(?:escapes|escaped|escape sequences)\b",
            r"\b(?:after|before|between|inside|in) (?:each|every) (?:word|words|letter|letters|character|characters)\b",
            r"\b(?:underscores|dots|dashes|hyphens) for spaces\b",
            r"\b(?:fullwidth|full width|small caps|upside down|mathematical|bold math)",
            r"\baccents? on (?:every|each|all)\b",
            r"\b(?:alternating|alternate|random) (?:case|caps|capitals)\b",
            r"\b(?:single|separate|individual) (?:letters|characters)\b",
            r"\bfiller (?:word|words|letter|letters)\b",
            r"\b(?:pairs?|order) of (?:the )?words (?:swapped|shuffled|scrambled|reversed)\b",
            r"\bwithout (?:the |any |its )?vowels\b",
            r"\bvowels? (?:removed|dropped|left out)\b|\bdrop(?:ping)? (?:the |all )?vowels\b",
            r"\b(?:zero width|homoglyph|look ?alike)\b",
        ),
        _patterns(r"\bin code\b", r"\bcode ?word", r"\bobfuscat", r"\bdisguis"),
    ),
    Rule(
        "translation",
        "asks for the interview's words translated into another language",
        (),
        _patterns(
            r"\btranslat",
            r"\b(?:in|into) (?:french|spanish|german|italian|portuguese|dutch|polish|russian|chinese|mandarin"
            r"|japanese|korean|arabic|hindi|latin|greek|esperanto|another language|a different language)\b",
        ),
    ),
    Rule(
        "reversal",
        "asks for the interview's words reversed",
        _patterns(r"\b(?:reversed|backwards) (?:order|text|word|words|letters|characters|spelling)\b"),
        _patterns(r"\brevers", r"\bbackwards?\b", r"\bback to front\b", r"\bright to left\b", r"\bmirror"),
    ),
    Rule(
        "verbatim",
        "asks for the interview's words verbatim (quoted, repeated, read back or recited exactly)",
        _patterns(
            r"\bverbatim\b",
            r"\bword for word\b",
            r"\bexact (?:words|wording|quote|quotes|quotation|text|phrase|phrasing|passage|transcript)\b",
            r"\bexactly (?:as|what|how) you (?:said|told|wrote|put|phrased)\b",
            r"\b(?:quote|recite|read back|read aloud|read out|transcribe|reproduce|copy out)\b.*"
            r"\b(?:interview|transcript|recording|tape|exactly|passage|part \d+)\b",
            r"\brepeat(?:s|ed|ing)?\b.*\b(?:interview|transcript|exactly|part \d+|you said|you told|your answer"
            r"|your words)\b",
            r"\b(?:whole|full|entire|complete) (?:interview|transcript|recording)\b",
        ),
        _patterns(
            r"\bquot(?:e|es|ed|ing|ation)\b",
            r"\brepeat(?:s|ed|ing)?\b",
            r"\brecite\b",
            r"\bread (?:it |them |this |that |part \d+ )?(?:of it )?(?:back|aloud|out)\b",
            r"\baloud\b",
            r"\b(?:write|give|tell|send|say|output|print|type|show)(?: me| us)?(?: back)? (?:what|everything|all)"
            r" (?:that )?you (?:said|told|wrote|mentioned)\b",
        ),
    ),
    Rule(
        "instructions",
        "asks for the agent's instructions, its context or its private marker",
        _patterns(
            r"\bsystem (?:prompt|message|instructions)\b",
            r"\b(?:private|secret|hidden) marker\b",
            r"\bmarker line\b",
            r"\byour (?:instructions|prompt|context|configuration)\b",
            r"\bcontext window\b",
            r"\bignore (?:all |any |the |your )?(?:previous |prior |above |earlier )?(?:instructions|rules)\b",
            r"\bdeveloper mode\b",
            r"\b(?:system|admin|operator) override\b",
            r"\babove this (?:question|message|line)\b",
            r"\bfull text above\b",
        ),
        _patterns(r"\bmarker\b", r"\binstructions\b", r"\brules no longer apply\b"),
    ),
)

BY_NAME = {rule.name: rule for rule in RULES}
