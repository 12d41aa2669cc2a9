"""The access code: grouped, without look-alike characters, and read back however it is typed."""

from __future__ import annotations

import re

from interviewer.session.access_codes import ALPHABET, new_access_code, normalized


def test_codes_are_grouped_and_free_of_look_alikes():
    codes = {new_access_code() for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        assert re.fullmatch(r"([2-9A-Z]{4}-){6}[2-9A-Z]{4}", code), code
        assert not set(code) & set("01OILUV")
    assert not set(ALPHABET) & set("01OILUV")


def test_a_code_typed_loosely_reads_back():
    code = new_access_code()
    assert normalized(code.lower().replace("-", " ")) == code
    assert normalized(f"  {code.replace('-', '')}  ") == code
    assert normalized("an-older-random-token_x") == "an-older-random-token_x"  # older codes pass unchanged
