"""The reviewer sees which words of a withheld answer tripped the output check."""

from agentbank.consultation.output_check.highlights import overlaps
from agentbank.consultation.output_check.reference import Reference

TURN = "We moved to the farm outside Dayton the spring my father lost his job at the mill in town."
CANARY = "Zanzibar-quokka-7731"


def marked(text, ranges):
    return [text[a:b] for a, b in ranges]


def test_a_quote_the_canary_and_a_name_are_marked_and_nothing_else():
    reference = Reference.build([TURN, "Something else entirely."], CANARY, ["Harold Benson"])
    quote = "the farm outside Dayton the spring my father lost his job at the mill"
    answer = f"Well, honestly: {quote}. Ask Harold Benson, or use zanzibarquokka7731 as you like."
    assert marked(answer, overlaps(answer, reference)) == [quote, "Harold Benson", "zanzibarquokka7731"]


def test_eleven_words_of_a_turn_and_plain_prose_are_not_marked():
    reference = Reference.build([TURN], CANARY, [])
    eleven = "the farm outside Dayton the spring my father lost his job"
    assert overlaps(f"I recall {eleven}, more or less.", reference) == []
    assert overlaps("I favor it, on balance.", reference) == []
    assert overlaps("", reference) == []


def test_a_quote_in_another_case_with_other_punctuation_is_still_found_where_it_is_written():
    reference = Reference.build([TURN], CANARY, [])
    answer = "THE FARM — outside Dayton, the spring my father lost his job at the mill!"
    (span,) = overlaps(answer, reference)
    assert answer[span[0] : span[1]] == "THE FARM — outside Dayton, the spring my father lost his job at the mill"
