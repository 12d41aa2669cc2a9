"""Every setting carries its meaning in the code (an attribute docstring), from which its documentation is written."""

from collections import Counter

from pydantic.fields import FieldInfo

from agentbank.core.settings import Settings


def undescribed(fields: dict[str, FieldInfo]) -> list[str]:
    """The fields whose description is missing, blank, or not a sentence ending with a full stop."""
    return [
        name
        for name, field in fields.items()
        if not (field.description and field.description.strip() and field.description.rstrip().endswith("."))
    ]


def shared(fields: dict[str, FieldInfo]) -> list[str]:
    """The descriptions more than one field has."""
    counts = Counter((field.description or "").strip() for field in fields.values())
    return [description for description, count in counts.items() if count > 1]


def test_docstrings_become_descriptions():
    assert Settings.model_config.get("use_attribute_docstrings") is True
    assert Settings.model_fields["environment"].description.startswith("Where the bank runs")


def test_every_setting_is_described():
    assert undescribed(Settings.model_fields) == []


def test_no_two_settings_share_a_description():
    assert shared(Settings.model_fields) == []


def test_a_setting_without_a_docstring_is_caught():
    class WithBareField(Settings):
        bare_setting: int = 1

    class WithCopiedDocstring(Settings):
        copied_setting: int = 1
        """Seconds between a worker's heartbeats, by which it proves it is alive."""

    assert undescribed(WithBareField.model_fields) == ["bare_setting"]
    assert undescribed(WithCopiedDocstring.model_fields) == []
    assert shared(WithCopiedDocstring.model_fields) == [Settings.model_fields["worker_heartbeat_s"].description]
