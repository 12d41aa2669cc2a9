"""``scripts/turn_walk.py`` keeps walking one end of turn through the real routes, and the walk keeps its
promise: the participant's key unwrapped once, the transcript decrypted once, no call back up, few returns."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "turn_walk.py"


def test_one_end_of_turn_unwraps_the_key_once_and_decrypts_the_transcript_once(fresh_database, monkeypatch):
    spec = importlib.util.spec_from_file_location("turn_walk", SCRIPT)
    assert spec is not None and spec.loader is not None
    turn_walk = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "turn_walk", turn_walk)  # its dataclasses look their module up
    spec.loader.exec_module(turn_walk)
    walk = turn_walk.walk_one_end_of_turn(fresh_database)
    figures = turn_walk.figures(walk)
    assert walk.stops[0][2] == "end_turn" and figures["files"] >= 2
    assert figures["key unwraps"] == 1 and figures["transcript decryptions"] == 1
    assert figures["climbs"] == 0
    # One owner walks the turn down once: no coming back to ``interviews`` for what the turn has loaded.
    assert figures["interviews.py entries"] <= 1 and figures["returns"] < 5
    # The script snapshot is parsed and prepared once per process, not on every request (it was 20 stops).
    assert figures["stops"] <= 18
