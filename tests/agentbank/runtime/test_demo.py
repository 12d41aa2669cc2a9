"""The demo's interviews: a dozen fictional people shipped with the package, labelled fictional in every file
and in the bank; the WPA life histories of the optional reference data only when asked for."""

import json
import shutil

import pytest

from agentbank.building.ingest import parse_turns_json
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings, project_root
from agentbank.publication.breakdowns import BREAKDOWNS, UNKNOWN
from agentbank.runtime import demo
from agentbank.runtime.demo import DEMO_SOURCE, FICTIONAL, demo_interviews, fictional_interviews

REFERENCE = (project_root() / ".." / "shared" / "data").resolve()


def test_the_reference_data_is_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reference = Settings().reference_data_dir
    assert reference.is_absolute() and reference == REFERENCE
    monkeypatch.setenv("AGENTBANK_REFERENCE_DATA_DIR", "elsewhere")  # a relative setting: from here
    assert Settings().reference_data_dir == tmp_path.resolve() / "elsewhere"


def test_a_dozen_fictional_people_each_labelled_so():
    interviews = fictional_interviews()
    assert len(interviews) == 12
    for path, interview in zip(sorted(FICTIONAL.glob("*.json")), interviews, strict=True):
        body = json.loads(path.read_text(encoding="utf-8"))
        assert body["fictional"] is True and "fictional person" in body["notice"] and "no one" in body["notice"]
        assert interview.source_ref == f"{DEMO_SOURCE}{path.name}"
        assert 300 <= interview.participant_words <= 700, path.name  # short: the first agent soon
        assert len(interview.turns) == 22  # eleven questions, each answered
    assert "fictional" in (FICTIONAL / "README.md").read_text(encoding="utf-8")


def test_their_demographics_fill_the_breakdowns_and_differ():
    demographics = [i.demographics for i in fictional_interviews()]
    for breakdown in BREAKDOWNS.values():
        categories = [breakdown.classify(d) for d in demographics]
        assert UNKNOWN not in categories, breakdown.key
        assert len(set(categories)) >= 2, breakdown.key  # a table by any breakdown has more than one group
    assert sum(d["sex"] == 1 for d in demographics) == 6  # six men, six women: the first chart by sex shows both


def test_a_file_not_marked_fictional_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "demo_interviews"
    shutil.copytree(FICTIONAL, folder)
    monkeypatch.setattr(demo, "FICTIONAL", folder)
    body = json.loads((folder / "01_marisol.json").read_text(encoding="utf-8"))
    del body["fictional"]
    (folder / "01_marisol.json").write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"01_marisol\.json .* not marked fictional"):
        fictional_interviews()
    for path in folder.glob("*.json"):
        path.unlink()
    with pytest.raises(ConfigurationError, match="missing"):
        fictional_interviews()


def test_the_demo_needs_no_reference_data(tmp_path):
    interviews = demo_interviews(tmp_path / "nowhere")  # no life histories asked for: nothing read from there
    assert [i.source_ref for i in interviews] == [i.source_ref for i in fictional_interviews()]
    assert parse_turns_json(FICTIONAL / "12_dakota.json").demographics["region"] == 4


def test_life_histories_asked_for_without_the_reference_data_name_the_path(tmp_path):
    with pytest.raises(ConfigurationError) as caught:
        demo_interviews(tmp_path / "nowhere", 2)
    assert str(tmp_path / "nowhere") in caught.value.message
    assert "AGENTBANK_REFERENCE_DATA_DIR" in caught.value.hint and "--life-histories" in caught.value.hint


@pytest.mark.skipif(not (REFERENCE / "transcripts").is_dir(), reason="the optional reference data is absent")
@pytest.mark.parametrize("life_histories", [1, 3])
def test_as_many_life_histories_as_asked_beside_the_fictional_people(life_histories):
    interviews = demo_interviews(REFERENCE, life_histories)
    assert len(interviews) == 12 + life_histories
    assert all(not i.source_ref.startswith(DEMO_SOURCE) for i in interviews[12:])
