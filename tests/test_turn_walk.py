"""``scripts/turn_walk.py`` keeps walking one chunk and one end of turn through the real routes, and the walks
keep their promise: the participant's key unwrapped once, the transcript decrypted once at the end of the turn
and never for a chunk, no call back up, one entry into the session's interviews, few stops."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "turn_walk.py"


def test_a_chunk_and_an_end_of_turn_unwrap_the_key_once_and_go_down_once(fresh_database, monkeypatch):
    spec = importlib.util.spec_from_file_location("turn_walk", SCRIPT)
    assert spec is not None and spec.loader is not None
    turn_walk = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "turn_walk", turn_walk)  # its dataclasses look their module up
    spec.loader.exec_module(turn_walk)
    walks = turn_walk.walk_a_chunk_and_its_end_of_turn(fresh_database)
    chunk, end = (turn_walk.figures(walks[name]) for name in ("chunk", "end of turn"))
    assert walks["chunk"].stops[0][2] == "put_chunk" and walks["end of turn"].stops[0][2] == "end_turn"
    assert chunk["key unwraps"] == 1 and chunk["transcript decryptions"] == 0  # a frame never opens the transcript
    assert end["key unwraps"] == 1 and end["transcript decryptions"] == 1
    assert chunk["climbs"] == end["climbs"] == 0
    # One owner walks each request down once: no coming back to ``interviews`` for what it has loaded.
    assert chunk["interviews.py entries"] <= 1 and end["interviews.py entries"] <= 1
    # A frame walked 35 stops with 25 returns when the router handed it to the recording twice (add_chunk,
    # then end_of_turn, the key's cipher passed between them) and the listener asked its detector each time.
    assert chunk["stops"] <= 18 and chunk["returns"] <= 8
    assert end["stops"] <= 18 and end["returns"] < 6
