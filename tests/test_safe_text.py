"""Names from traces made safe on a terminal and in Markdown."""

from __future__ import annotations

from orchlog.safe_text import for_terminal, markdown_code, markdown_text

HOSTILE = "a|b<img src=x onerror=alert(1)>`code`\nnext *em* _x_ [l](u) \x1b]0;title\x07\x1b[2J \u202eevil"


def test_terminal_text_shows_control_and_bidi_characters_as_escapes_and_keeps_newlines_and_tabs():
    out = for_terminal("ok\ttab\nline \x1b[31mred\x9b \x7f \u202e")
    assert out == "ok\ttab\nline \\x1b[31mred\\x9b \\x7f \\u202e"
    assert not any(ord(c) < 0x20 and c not in "\t\n" for c in for_terminal(HOSTILE))


def test_markdown_text_cannot_break_a_table_cell_open_html_or_make_emphasis_links_or_code():
    out = markdown_text(HOSTILE)
    assert "\n" not in out and "<" not in out and "|" not in out.replace("\\|", "")
    for raw in ("`", "*", "[", "]", "_x_"):
        assert raw not in out.replace("\\" + raw[0], "")
    assert markdown_text("attn_norm kv_aligned=1") == "attn_norm kv_aligned=1"  # words stay as they are written


def test_a_markdown_code_span_is_fenced_by_more_backticks_than_it_holds():
    assert markdown_code("run.jsonl") == "`run.jsonl`"
    assert markdown_code("a``b|c") == "```a``b\\|c```"
    assert markdown_code("`x") == "`` `x ``"
    assert "\n" not in markdown_code("two\nlines")
