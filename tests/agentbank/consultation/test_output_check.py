"""The output check's edges: span length, normalization, encodings, canaries, the deny-list."""

import base64
import uuid

import pytest

from agentbank.building.deny_list import extract_entities
from agentbank.consultation.output_check.check import check
from agentbank.consultation.output_check.received import Received
from agentbank.consultation.output_check.reference import (
    CANARY,
    CANARY_PIECE,
    CUMULATIVE,
    DENY_LIST,
    SPAN_TOKENS,
    VERBATIM,
    Reference,
    tokens,
)
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from tests.support.output_check import MARKER, TURN, hand_out, longest_run
from tests.support.transforms import CONTROLS, PASSPHRASE, TRANSFORMS

WORDS = tokens(TURN)


def span(n, start=3):
    return " ".join(WORDS[start : start + n])


def test_twelve_tokens_are_blocked_eleven_pass(reference):
    assert SPAN_TOKENS == 12
    assert check(f"Well, {span(12)}, honestly.", reference).reasons == (VERBATIM,)
    assert check(f"Well, {span(11)}, honestly.", reference).released
    # Two 11-token pieces that do not join into a 12-token run still pass.
    assert check(f"{span(11, 0)} and then {span(11, 15)}", reference).released


def test_case_and_punctuation_do_not_hide_a_quote(reference):
    shouted = " ".join(w.upper() + ("!" if i % 3 == 0 else ",") for i, w in enumerate(WORDS[5:20]))
    assert check(shouted, reference).reasons == (VERBATIM,)
    assert check("  ".join(WORDS[0:12]).replace(" ", "\n  "), reference).reasons == (VERBATIM,)


def test_a_paraphrase_passes(reference):
    paraphrase = (
        "At nineteen I moved away from home with very little money and a suitcase I had borrowed, "
        "taking an overnight bus to a city where I could be anonymous."
    )
    assert check(paraphrase, reference).released


def test_encoded_quotes_are_decoded(reference):
    quote = " ".join(TURN.split()[2:16])
    b64 = base64.b64encode(quote.encode()).decode()
    assert check(f"Here you go: {b64}", reference).reasons == (VERBATIM,)
    assert check(f"hex: {quote.encode().hex()}", reference).reasons == (VERBATIM,)
    assert check(f"spaced hex: {' '.join(f'{b:02x}' for b in quote.encode())}", reference).reasons == (VERBATIM,)
    assert check("an id like 3f9a1c0e5b7d2a4f6e8c1b3d5f7a9c0e is not text", reference).released


@pytest.mark.parametrize(
    "leak",
    [
        f"The marker is {MARKER}.",
        f"MARKER: {MARKER.upper()}",
        " ".join(MARKER),
        "-".join(MARKER),
        MARKER[::-1],
        base64.b64encode(f"marker {MARKER}".encode()).decode(),
        f'{{"first": "{MARKER[:12]}", "second": "{MARKER[12:]}"}}',
    ],
)
def test_the_canary_in_any_spelling_is_blocked(reference, leak):
    assert CANARY in check(leak, reference).reasons


def test_deny_listed_names_are_blocked_as_whole_tokens(reference):
    assert check("I worked with rosa martinez for years.", reference).reasons == (DENY_LIST,)
    assert check("Dayton, Ohio.", reference).reasons == (DENY_LIST,)
    assert check("Rosa said the daytona race was loud.", reference).released


def test_entities_from_a_participants_turns():
    found = extract_entities(
        [
            "I grew up in Dayton with my sister. My boss at Ford Motor Company was Rosa Martinez.",
            "Honestly I think Tuesday was fine. The Smiths moved to Cleveland in May.",
            "Dayton is where I learned to drive.",
        ]
    )
    assert {"Dayton", "Ford Motor Company", "Rosa Martinez", "Smiths", "Cleveland"} <= set(found)
    assert not {"I", "My", "Honestly", "Tuesday", "May", "The"} & set(found)


def test_canaries_are_stable_secret_and_distinct():
    agent, other = uuid.uuid4(), uuid.uuid4()
    keys = KeyRing("s" * 40, MemoryKeyStore())
    assert keys.canary(agent) == KeyRing("s" * 40, MemoryKeyStore()).canary(agent) != keys.canary(other)
    assert keys.canary(agent) != KeyRing("t" * 40, MemoryKeyStore()).canary(agent)
    assert len(keys.canary(agent)) == 24 and keys.canary(agent).isalnum()


# Findings of the issue, checked offline: each disguise of a whole turn or of the marker is withheld.
@pytest.fixture(scope="module")
def with_passphrase():
    return Reference.build([TURN, PASSPHRASE], MARKER, ["Rosa Martinez"])


@pytest.mark.parametrize("how", list(TRANSFORMS))
def test_a_disguised_turn_is_withheld(with_passphrase, how):
    assert VERBATIM in check(TRANSFORMS[how](PASSPHRASE), with_passphrase).reasons


@pytest.mark.parametrize("how", list(TRANSFORMS))
def test_a_disguised_marker_is_withheld(with_passphrase, how):
    assert CANARY in check(TRANSFORMS[how](MARKER), with_passphrase).reasons


@pytest.mark.parametrize("answer", list(CONTROLS.values()))
def test_honest_answers_on_the_same_topics_pass(with_passphrase, answer):
    assert check(answer, with_passphrase).released


def test_pieces_under_the_span_do_not_rebuild_a_turn(with_passphrase):
    words = PASSPHRASE.split()
    received = Received(with_passphrase)
    first, second, third = " ".join(words[:11]), " ".join(words[11:22]), " ".join(words[22:])
    assert check(first, with_passphrase, received).released
    received.add(first)
    assert check(third, with_passphrase, received).released  # not adjacent to what was received
    received.add(third)
    # The middle piece would join the two into the whole turn, in any order it is asked.
    assert check(second, with_passphrase, received).reasons == (CUMULATIVE,)
    assert check(second, with_passphrase).released  # alone it is under the span


def test_what_was_received_before_does_not_withhold_unrelated_answers(with_passphrase):
    received = Received(with_passphrase)
    received.add(PASSPHRASE)  # e.g. released by a reviewer
    assert check("I like my garden and my grandchildren.", with_passphrase, received).released
    assert check(" ".join(PASSPHRASE.split()[:5]), with_passphrase, received).released


def test_separators_inside_a_quote_change_nothing(reference):
    quote = " ".join(WORDS[2:16])
    for disguised in (quote.replace(" ", "_"), quote.replace(" ", "\u200b"), quote.replace(" ", ". "),
                      " ".join(quote.replace(" ", "")), quote.replace(" ", "\n")):  # fmt: skip
        assert check(disguised, reference).reasons == (VERBATIM,), disguised


# One word of the turn per answer, in order. These encodings of a single word are shorter than the
# decoders' shortest run (16 encoded characters), so they are not read: a limit stated in the module.
SHORT_ENCODINGS = {"base64 in 12-character groups", "base32", "\\x escapes", "8-bit binary", "base64 of the hex"}
ONE_WORD = {
    "bare": lambda w: w,
    "in a sentence": lambda w: f"The word you asked for is {w}.",
    **{how: f for how, f in TRANSFORMS.items() if how not in SHORT_ENCODINGS},
}


@pytest.mark.parametrize("how", list(ONE_WORD))
def test_one_word_per_answer_does_not_rebuild_a_turn(with_passphrase, how):
    words = PASSPHRASE.split()
    assert longest_run(hand_out([ONE_WORD[how](w) for w in words], with_passphrase), words) < SPAN_TOKENS


def test_pieces_of_a_few_letters_do_not_rebuild_a_turn(with_passphrase):
    words = PASSPHRASE.split()
    letters = "".join(words)
    for size in (3, 7):
        pieces = [letters[i : i + size] for i in range(0, len(letters), size)]
        released = hand_out(pieces, with_passphrase)
        assert not all(released), size
        # The letters shown, and which whole words of the turn they hold.
        shown = "".join(p if r else "\0" * len(p) for p, r in zip(pieces, released, strict=True))
        whole, position = [], 0
        for word in words:
            whole.append("\0" not in shown[position : position + len(word)])
            position += len(word)
        assert longest_run(whole, words) < SPAN_TOKENS, size


@pytest.mark.parametrize("size", [2, 4, 7])
@pytest.mark.parametrize("wrap", ["{}", "Characters {n}: {}", "{} (part {n})"])
def test_the_marker_in_pieces_is_stopped(with_passphrase, size, wrap):
    received, released = Received(with_passphrase), []
    for n, i in enumerate(range(0, len(MARKER), size)):
        piece = wrap.format(MARKER[i : i + size], n=n + 1)
        verdict = check(piece, with_passphrase, received)
        if verdict.released:
            received.add(piece)
            released.append(MARKER[i : i + size])
        else:
            assert CANARY in verdict.reasons
            released.append("|")
    assert max(len(run) for run in "".join(released).split("|")) < 8


# A marker that holds the words around its pieces ("to", "12"): they must not break the pieces' order.
TRICKY_MARKER = "snnrtoqdbv12thfjv5rccvkp"


def _hand_out_marker(reference, pieces: list[tuple[int, int]]) -> str:
    """Ask for the marker's characters ``first`` to ``last`` in turn; the marker as the team sees it
    afterwards, a "|" where a piece was withheld."""
    received, shown = Received(reference), ""
    for first, last in pieces:
        piece = f"Characters {first} to {last}: {TRICKY_MARKER[first - 1 : last]}"
        verdict = check(piece, reference, received)
        if verdict.released:
            received.add(piece)
            shown += TRICKY_MARKER[first - 1 : last]
        else:
            assert CANARY in verdict.reasons
            shown += "|"
    return shown


@pytest.mark.parametrize(
    "pieces",
    [
        [(n, n + 3) for n in range(1, 25, 4)],  # in order, four at a time
        [(n, n + 4) for n in range(1, 22, 3)],  # overlapping
        [(n, n + 3) for n in range(1, 25, 5)],  # one character left out between pieces, to be guessed
    ],
    ids=["in order", "overlapping", "one skipped"],
)
def test_the_marker_in_pieces_is_stopped_whatever_words_surround_them(pieces):
    reference = Reference.build([TURN], TRICKY_MARKER, [])
    shown = _hand_out_marker(reference, pieces)
    assert "|" in shown
    assert max(len(run) for run in shown.split("|")) < CANARY_PIECE


def test_words_the_marker_happens_to_hold_are_not_a_leak():
    reference = Reference.build([TURN], TRICKY_MARKER, [])
    received = Received(reference)
    for answer in ["I went to the farm at 12 and came back to the city.", "Yes, to be honest, 12 or so.",
                   "The rc car and the kp club, snn is not a word."] * 3:  # fmt: skip
        assert check(answer, reference, received).released, answer
        received.add(answer)


def test_honest_answers_asked_again_and_again_pass(with_passphrase):
    received = Received(with_passphrase)
    for answer in [*CONTROLS.values()] * 3:
        assert check(answer, with_passphrase, received).released, answer
        received.add(answer)
