"""A turn handed out in pieces that add up: two pieces of a span, every k-th word, words by number, the
marker four characters at a time in any order; and honest answers, asked again and again, still pass."""

from __future__ import annotations

import random

import pytest

from agentbank.consultation.output_check.check import check
from agentbank.consultation.output_check.received import Received
from agentbank.consultation.output_check.reference import CANARY, CANARY_PIECE, SPAN_TOKENS, Reference
from tests.support.factories import interview
from tests.support.honest import HONEST
from tests.support.output_check import MARKER, TURN, hand_out, longest_run
from tests.support.transforms import CONTROLS, PASSPHRASE

TURNS = [TURN, PASSPHRASE]


@pytest.fixture(scope="module")
def reference():
    return Reference.build(TURNS, MARKER, ["Rosa Martinez"])


def splits():
    """Every two-piece split of every 12-word span of the turns: (first piece, second piece, words), in
    both orders, as bare words and as an answer that says which words they are."""
    for turn in TURNS:
        words = turn.split()
        for start in range(len(words) - SPAN_TOKENS + 1):
            span = words[start : start + SPAN_TOKENS]
            for cut in range(1, SPAN_TOKENS):
                pieces = [(start + 1, start + cut, span[:cut]), (start + cut + 1, start + SPAN_TOKENS, span[cut:])]
                for first, second in (pieces, pieces[::-1]):
                    yield " ".join(first[2]), " ".join(second[2])
                    yield (f"Words {first[0]} to {first[1]}: {' '.join(first[2])}",
                           f"Words {second[0]} to {second[1]}: {' '.join(second[2])}")  # fmt: skip


def test_no_two_pieces_of_a_span_are_both_released(reference):
    tried = passed = 0
    for first, second in splits():
        tried += 1
        received = Received(reference)
        if not check(first, reference, received).released:
            continue  # withheld alone (a piece that takes in a short word before it)
        received.add(first)
        passed += check(second, reference, received).released
    print(f"two-piece splits of 12-word spans released whole: {passed} of {tried}")
    assert tried == 2 * 2 * 11 * sum(len(t.split()) - SPAN_TOKENS + 1 for t in TURNS)
    assert passed == 0


def _released_words(pieces: list[tuple[list[int], str]], reference) -> list[bool]:
    """Hand out answers, each naming some of the passphrase's words; which words the team got."""
    words = PASSPHRASE.split()
    shown = [False] * len(words)
    released = hand_out([answer for _, answer in pieces], reference)
    for (places, _), out in zip(pieces, released, strict=True):
        for place in places if out else ():
            shown[place] = True
    return shown


@pytest.mark.parametrize("stride", [2, 3, 4])
@pytest.mark.parametrize("wrap", ["bare", "numbered"])
def test_every_kth_word_does_not_rebuild_a_turn(reference, stride, wrap):
    words = PASSPHRASE.split()
    pieces = []
    for offset in range(stride):
        places = list(range(offset, len(words), stride))
        if wrap == "bare":
            pieces.append((places, " ".join(words[p] for p in places)))
        else:
            pieces.append((places, " ".join(f"Word {p + 1}: {words[p]}." for p in places)))
    shown = _released_words(pieces, reference)
    assert longest_run(shown, words) < SPAN_TOKENS


@pytest.mark.parametrize("wrap", ["Word {n} is {w}.", "The {n}th word is {w}.", "{n}. {w}"])
def test_words_by_number_in_any_order_do_not_rebuild_a_turn(reference, wrap):
    words = PASSPHRASE.split()
    order = list(range(len(words)))
    random.Random(7).shuffle(order)
    # Five per answer, as a job of five questions would bring them.
    pieces = []
    for i in range(0, len(order), 5):
        chosen = order[i : i + 5]
        pieces.append((chosen, " ".join(wrap.format(n=p + 1, w=words[p]) for p in chosen)))
    shown = _released_words(pieces, reference)
    assert longest_run(shown, words) < SPAN_TOKENS


def test_odd_words_alone_pass_and_the_even_words_after_them_do_not(reference):
    words = PASSPHRASE.split()[:22]
    odd, even = " ".join(words[0::2]), " ".join(words[1::2])
    received = Received(reference)
    assert check(odd, reference, received).released
    received.add(odd)
    assert check(even, reference, received).reasons == ("cumulative",)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_marker_four_characters_at_a_time_in_any_order_is_stopped(reference, seed):
    starts = list(range(0, len(MARKER), 4))
    random.Random(seed).shuffle(starts)
    received, shown = Received(reference), set()
    for start in starts:
        piece = f"Characters {start + 1} to {start + 4}: {MARKER[start : start + 4]}"
        verdict = check(piece, reference, received)
        if verdict.released:
            received.add(piece)
            shown.update(range(start, start + 4))
        else:
            assert CANARY in verdict.reasons
    assert len(shown) < CANARY_PIECE  # one piece at most: four characters of 24


HONEST_TURNS = [t.text for t in interview(turns=12, extra=PASSPHRASE).turns if t.speaker == "participant"]


def test_honest_answers_asked_again_and_again_pass():
    reference = Reference.build([*HONEST_TURNS, TURN], MARKER, ["Rosa Martinez"])
    answers = [*HONEST.values(), *CONTROLS.values()]
    assert len(answers) >= 40
    received, withheld = Received(reference), []
    for _ in range(3):
        for answer in answers:
            if check(answer, reference, received).released:
                received.add(answer)
            else:
                withheld.append(answer)
    print(f"honest answers withheld: {len(withheld)} of {3 * len(answers)}")
    assert withheld == []
