import gzip
import json
from pathlib import Path

import pytest

from agentbank.building.ingest import IngestError, iter_fwp, parse_plain_text, parse_turns_json, read_interviews

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "transcripts"
SAMPLE = DATA / "sample_interview"


def test_sample_interview_json_and_text_agree():
    from_json = parse_turns_json(SAMPLE / "joon_park_sample_interview.json")
    from_text = parse_plain_text(SAMPLE / "joon_park_sample_interview.txt")
    assert from_json.turns[0].speaker == "interviewer" and from_json.turns[1].speaker == "participant"
    # 115 exchanges; three statements got no answer, so 227 turns and about 10,000 participant words.
    assert len(from_json.turns) == 227 == len(from_text.turns)
    assert from_json.participant_words == from_text.participant_words
    assert 9_500 < from_json.participant_words < 10_500


def test_life_histories_mostly_read_cleanly():
    results = [r for path in sorted((DATA / "fwp_life_histories").iterdir()) for r in iter_fwp(path)]
    clean = [r for r in results if not isinstance(r, IngestError)]
    assert len(results) == 1248
    assert len(clean) == 1246  # two records are editorial notes with no narrative
    first = clean[0]
    assert first.source_ref == "fwp:interview_0001_001.xml"
    assert first.demographics == {"sex": 2, "race": 2, "region": 3, "occupation": "cook; maid"}
    assert first.turns[0].text.startswith("My name is Rosa Lee Johnson")


@pytest.mark.parametrize(
    ("content", "place"),
    [
        ('{"turns": [{"interviewer": "Hi", "respondent": "Hello"}, {"interviewer": 5, "respondent": "x"}]}',
         "turns[1].interviewer"),
        ('{"turns": [{"speaker": "Q", "text": ""}]}', "turns[0].text"),
        ('{"turns": [{"who": "Q"}]}', "turns[0]: expected"),
        ('{"turns": []}', "non-empty list"),
        ('{"turns": [\n{"speaker": "Q",}]}', "line 2"),
    ],
)  # fmt: skip
def test_malformed_json_names_the_place(tmp_path, content, place):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(IngestError, match=place.replace("[", r"\[").replace("]", r"\]")) as raised:
        parse_turns_json(path)
    assert "bad.json" in str(raised.value)


def test_plain_text_continuation_and_errors(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("Interviewer: Where did you grow up?\n\nAda: In Ohio.\nOn a farm.\nInterviewer: Thanks.\n")
    parsed = parse_plain_text(good)
    assert [(t.speaker, t.text) for t in parsed.turns] == [
        ("interviewer", "Where did you grow up?"),
        ("participant", "In Ohio.\nOn a farm."),
        ("interviewer", "Thanks."),
    ]
    bad = tmp_path / "bad.txt"
    bad.write_text("no speaker here at all, just a sentence that goes on and on\nAda: hi\n")
    with pytest.raises(IngestError, match="line 1"):
        parse_plain_text(bad)


def test_fwp_errors_name_the_line_and_skip_when_asked(tmp_path):
    paragraph = "A long paragraph of the narrative goes on here today. " * 3
    good = {"doc": "a.xml", "text": f"Intro\n\n{paragraph}\n\n{paragraph}"}
    path = tmp_path / "lh.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(good) + "\n{not json\n" + json.dumps({"doc": "b.xml", "text": "x"}) + "\n")
    with pytest.raises(IngestError, match=r"lh\.jsonl\.gz: line 2"):
        read_interviews(path)
    interviews, skipped = read_interviews(path, skip_invalid=True)
    assert [i.source_ref for i in interviews] == ["fwp:a.xml"]
    assert [s.message.split(":")[1].strip() for s in skipped] == ["line 2", "line 3"]
