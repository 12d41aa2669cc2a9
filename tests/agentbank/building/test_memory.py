import pytest

from agentbank.building.memory import ablate, chunk_turns, estimate_tokens, render_turn, select_turns
from agentbank.building.transcripts import TurnText


def turns(n: int, words: int = 30) -> list[TurnText]:
    return [TurnText(i, "participant", " ".join(f"w{i}x{j}" for j in range(words))) for i in range(1, n + 1)]


def test_chunks_cover_every_turn_within_the_word_limit():
    transcript = [*turns(10), TurnText(11, "participant", "long " * 500)]
    chunks = chunk_turns(transcript, max_words=100)
    assert all(c.words <= 100 for c in chunks)
    covered = {p for c in chunks for p in range(c.first_turn, c.last_turn + 1)}
    assert covered == set(range(1, 12))
    # The long turn renders as 502 words with its number and speaker: six pieces of at most 100.
    assert sum(1 for c in chunks if c.first_turn == c.last_turn == 11) == 6


@pytest.mark.parametrize(("fraction", "removed"), [(0.0, 0), (0.2, 20), (0.25, 25), (0.5, 50), (1.0, 100)])
def test_ablation_removes_exactly_the_seeded_share(fraction, removed):
    transcript = turns(100, 3)
    kept = ablate(transcript, fraction, seed=7)
    assert len(transcript) - len(kept) == removed
    assert kept == ablate(transcript, fraction, seed=7)  # same seed, same turns
    assert [t.position for t in kept] == sorted(t.position for t in kept)


def test_ablation_seeds_differ_and_bounds_are_checked():
    transcript = turns(100, 3)
    assert ablate(transcript, 0.3, seed=1) != ablate(transcript, 0.3, seed=2)
    with pytest.raises(ValueError):
        ablate(transcript, 1.5, seed=1)


def test_select_turns_keeps_everything_that_fits_else_best_spans_in_order():
    transcript = turns(10, 20)
    total = sum(estimate_tokens(render_turn(t)) for t in transcript)
    assert select_turns(transcript, [(9, 10)], total) == transcript
    budget = 2 * estimate_tokens(render_turn(transcript[0]))
    chosen = select_turns(transcript, [(7, 7), (2, 2), (5, 5)], budget)
    assert [t.position for t in chosen] == [2, 7]
