"""The demo's interviews: the sample interview and exactly as many life histories as asked, from the
reference data wherever the command runs."""

import pytest

from agentbank.errors import ConfigurationError
from agentbank.runtime.demo import demo_interviews
from agentbank.settings import Settings, project_root


def test_the_reference_data_is_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reference = Settings().reference_data_dir
    assert reference.is_absolute() and (reference / "transcripts").is_dir()
    assert reference == (project_root() / ".." / "shared" / "data").resolve()
    monkeypatch.setenv("AGENTBANK_REFERENCE_DATA_DIR", "elsewhere")  # a relative setting: from here
    assert Settings().reference_data_dir == tmp_path.resolve() / "elsewhere"


@pytest.mark.parametrize("life_histories", [0, 1, 3])
def test_the_sample_interview_and_as_many_life_histories_as_asked(life_histories):
    interviews = demo_interviews(Settings().reference_data_dir, life_histories)
    assert len(interviews) == 1 + life_histories
    assert interviews[0].source_ref.endswith("joon_park_sample_interview.json")


def test_missing_reference_data_names_the_path(tmp_path):
    with pytest.raises(ConfigurationError) as caught:
        demo_interviews(tmp_path / "nowhere", 0)
    assert str(tmp_path / "nowhere") in caught.value.message
    assert "AGENTBANK_REFERENCE_DATA_DIR" in caught.value.hint
