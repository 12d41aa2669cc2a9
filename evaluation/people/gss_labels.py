"""The GSS panels' abbreviated labels, each mapped by hand to the Core codebook's code.

The panel files spell answers in the older 2006–2012 style ("Ind,near Dem", "Sev Times a Week",
"Lt High School"). Matching these by similarity picked wrong codes ("Lt High School" became high
school, "Oppose Pref" strongly opposes), so every label that is not the codebook's own wording is
listed here, item by item, and anything else is reported as unmapped rather than guessed.
"""

from __future__ import annotations

_ALLOWED_TO_SPEAK = {"allowed": 1, "yes allowed": 1}
_ALLOWED_TO_TEACH = {"allowed": 4, "yes allowed": 4}
_SOCIAL_EVENINGS = {
    "sev times a week": 2,
    "sev times a mnth": 3,
    "sev times a year": 5,
    "once a month": 4,
    "once a year": 6,
}
_SEX_WRONG = {"sometimes wrong": 3, "almst always wrg": 2}
_GOVT_OR_SELVES = {"govt action": 1, "govt should help": 1, "people help selves": 5}

# Census divisions (the panels' REGION) folded into the four census regions of the Core item.
_REGIONS = {
    "new england": 1,
    "middle atlantic": 1,
    "e nor central": 2,
    "w nor central": 2,
    "south atlantic": 3,
    "e sou central": 3,
    "w sou central": 3,
    "mountain": 4,
    "pacific": 4,
}

# item → normalized panel label → code. Keys are lower-case words without punctuation.
ALIASES: dict[str, dict[str, int]] = {
    "partyid": {
        "not str democrat": 1,
        "ind near dem": 2,
        "independent": 3,
        "ind near rep": 4,
        "not str republican": 5,
    },
    "polviews": {"moderate": 4, "slghtly conservative": 5, "extrmly conservative": 7},
    "eqwlth": {"govt reduce diff": 1, "no govt action": 7},
    "spkath": _ALLOWED_TO_SPEAK,
    "spkrac": _ALLOWED_TO_SPEAK,
    "spkcom": _ALLOWED_TO_SPEAK,
    "spkmil": _ALLOWED_TO_SPEAK,
    "spkhomo": _ALLOWED_TO_SPEAK,
    "spkmslm": _ALLOWED_TO_SPEAK,
    "colath": _ALLOWED_TO_TEACH,
    "colrac": _ALLOWED_TO_TEACH,
    "colmil": _ALLOWED_TO_TEACH,
    "colhomo": _ALLOWED_TO_TEACH,
    "colmslm": _ALLOWED_TO_TEACH,
    "colcom": {"fired": 4},
    "courts": {"too harsh": 1, "not harsh enough": 2},
    "grass": {"legal": 1, "not legal": 2},
    "attend": {
        "lt once a year": 1,
        "once a year": 2,
        "sevrl times a yr": 3,
        "once a month": 4,
        "2 3x a month": 5,
        "nrly every week": 6,
        "more thn once wk": 8,
    },
    "reliten": {"somewhat strong": 3},
    "pray": {"lt once a week": 5},
    "popespks": {"uncertain true or false": 3},
    "bible": {"book of fables": 3, "other": 4},
    "racopen": {"owner decides": 1, "cant discriminate": 2},
    "affrmact": {"strongly support pref": 1, "support pref": 2, "oppose pref": 3, "strongly oppose pref": 4},
    "helpful": {"helpful": 1, "lookout for self": 2},
    "fair": {"take advantage": 1, "fair": 2},
    "trust": {"can trust": 1, "cannot trust": 2},
    "socrel": _SOCIAL_EVENINGS,
    "socommun": _SOCIAL_EVENINGS,
    "socfrend": _SOCIAL_EVENINGS,
    "socbar": _SOCIAL_EVENINGS,
    "satjob": {"mod satisfied": 2, "a little dissat": 3},
    "richwork": {"continue working": 1},
    "rank": {"top": 1, "bottom": 10},
    "satfin": {"satisfied": 1, "more or less": 2, "not at all sat": 3},
    "getahead": {"hard work": 1, "both equally": 2, "luck or help": 3},
    "kidssol": {"no children volunteered": 6},
    "divlaw": {"stay same": 3},
    "premarsx": _SEX_WRONG,
    "teensex": _SEX_WRONG,
    "xmarsex": _SEX_WRONG,
    "homosex": _SEX_WRONG,
    "pornlaw": {"illegal to all": 1, "illegal under 18": 2, "legal": 3},
    "hunt": {"resp": 1, "spouse": 2, "both": 3, "neither": 4},
    "news": {"everyday": 1, "few times a week": 2, "less than once wk": 4},
    "helppoor": _GOVT_OR_SELVES,
    "helpsick": _GOVT_OR_SELVES,
    "helpnot": {"govt do more": 1, "govt does too much": 5},
    "helpblk": {"govt help blks": 1},
    "region": _REGIONS,
    "degree": {"lt high school": 0, "junior college": 2, "bachelor": 3},
    "wrkstat": {
        "working fulltime": 1,
        "working parttime": 2,
        "temp not working": 3,
        "unempl laid off": 4,
        "school": 6,
    },
    "relig": {"other eastern": 8, "moslem islam": 9},
    "rushed": {"almost never": 3},
}
