"""The participant's own survey after the interview (the battery), and its retest."""

from __future__ import annotations

from datetime import timedelta

from agentbank.core.settings import Settings
from agentbank.participants.battery.contents import Battery, build_battery


def battery_of(settings: Settings) -> Battery:
    """The battery the settings choose."""
    return build_battery(settings.battery_gss, settings.battery_big_five, settings.reference_data_dir)


def retest_after(settings: Settings) -> timedelta:
    """How long after the first survey the retest is offered."""
    return timedelta(days=settings.retest_after_days)
