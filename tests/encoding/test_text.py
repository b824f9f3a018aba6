"""JSON string escaping and UTF-8 repair."""

from __future__ import annotations

import json

from orchlog.encoding.text import json_string, to_text


def test_only_quotes_backslashes_and_c0_controls_are_escaped():
    assert json_string('a"b\\c\n\t\x01\x7f\u2028é🦙') == '"a\\"b\\\\c\\n\\t\\u0001\x7f\u2028é🦙"'
    assert json.loads(json_string("\x00\x1f\b\f\r")) == "\x00\x1f\b\f\r"


def test_invalid_utf8_bytes_become_replacement_characters_per_maximal_subpart():
    assert to_text(b"a\xffb") == "a\ufffdb"
    assert to_text(b"\xe2\x82") == "\ufffd"  # a truncated 3-byte sequence is one maximal subpart
    assert to_text(b"\xc0\xaf") == "\ufffd\ufffd"  # an overlong encoding: two invalid bytes


def test_lone_surrogates_in_str_are_repaired_like_bytes():
    assert "\ufffd" in to_text("x\udc80y")
    assert to_text("plain") == "plain"
