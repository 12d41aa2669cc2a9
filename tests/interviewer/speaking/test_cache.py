"""Scripted sentences are synthesized once and then read from the cache; nothing else is ever kept."""

from __future__ import annotations

from interviewer.session.script import load_script, shorten
from interviewer.speaking.cache import SpeechCache, scripted_sentences
from interviewer.speaking.speech import FakeSpeaker, split_sentences

SCRIPT = shorten(load_script(), modules=2)


def test_scripted_sentences_are_rendered_once(tmp_path):
    speaker = FakeSpeaker()
    cache = SpeechCache(tmp_path / "speech")
    scripted = scripted_sentences(SCRIPT)
    first_sentence = split_sentences(SCRIPT.opening)[0]
    assert first_sentence in scripted
    spoken = cache.speak(speaker, first_sentence, scripted)
    again = SpeechCache(tmp_path / "speech").speak(speaker, first_sentence, scripted)  # another process
    assert again.wav == spoken.wav and speaker.calls == [first_sentence]
    assert abs(again.duration_s - spoken.duration_s) < 1e-6


def test_a_follow_up_is_never_written_down(tmp_path):
    speaker = FakeSpeaker()
    cache = SpeechCache(tmp_path / "speech")
    follow_up = "You said your sister Anna moved to Lyon; how did that change things?"
    for _ in range(2):
        cache.speak(speaker, follow_up, scripted_sentences(SCRIPT))
    assert speaker.calls == [follow_up, follow_up]
    assert not (tmp_path / "speech").exists()


def test_each_voice_has_its_own_recording(tmp_path):
    cache = SpeechCache(tmp_path / "speech")
    scripted = scripted_sentences(SCRIPT)
    sentence = split_sentences(SCRIPT.closing)[0]
    slow, fast = FakeSpeaker(name="slow", seconds_per_char=0.1), FakeSpeaker(name="fast")
    assert cache.speak(slow, sentence, scripted).duration_s > cache.speak(fast, sentence, scripted).duration_s
