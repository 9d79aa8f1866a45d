"""One escaping function for every name a student or a corpus file controls (issue 44)."""

import os
import unicodedata

import pytest

from ragkit import corpus as corpus_module
from ragkit import terminal
from ragkit.corpus import load_corpus
from ragkit.index import IndexStatus
from ragkit.teach import untrusted
from ragkit.terminal import shown

HIDDEN = [
    "\x1b",
    "\x07",
    "\x00",
    "\r",
    "\x7f",
    "\x85",
    "\x9b",
    "\u061c",
    "\u200b",
    "\u200e",
    "\u200f",
    "\u2028",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\ufeff",
    "\ud800",
]
"""Controls (C0, DEL, C1: U+009B is a one-character CSI), bidi marks, overrides and isolates, zero-width and lone
surrogates: each changes what a terminal shows, or hides what a name says."""


@pytest.mark.parametrize("ch", HIDDEN, ids=[f"U+{ord(c):04X}" for c in HIDDEN])
def test_every_control_bidi_and_invisible_character_is_escaped(ch):
    out = shown(f"a{ch}b", None)
    assert ch not in out and out.startswith("a\\") and out.endswith("b") and out.isprintable()


def test_no_character_of_the_format_and_control_categories_survives():
    every = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp"))
    assert shown(every, None).isascii()


def test_ordinary_text_in_any_script_is_kept_as_it_is():
    text = "Étude für 中文 — ï ñ ß ∑ 😀 tab-less, back\\slash"
    assert shown(text, None) == text


def test_a_file_names_bytes_that_are_not_utf8_are_shown_as_the_bytes():
    assert shown(os.fsdecode(b"bad-\xff\xfe.md"), None) == "bad-\\xff\\xfe.md"


def test_lines_keeps_newlines_and_tabs_and_a_limit_says_how_long_the_text_was():
    assert shown("a\n\tb\x1b", None, lines=True) == "a\n\tb\\x1b"
    assert shown("a\nb", None) == "a\\nb"
    assert shown("x" * 100, 10) == "x" * 10 + "... (100 characters)"


def test_it_is_one_function_everywhere():
    # the teaching layer's shown is the engine's, with only the note on a cut text in the kernel's language
    for text in ("esc\x1b[2J", "x" * 61, "\u202eevil", "plain"):
        assert untrusted.readable(text) == terminal.shown(text), text
    assert not hasattr(corpus_module, "printable_name")


def test_file_names_with_escapes_or_longer_than_a_column_load_and_only_bytes_that_are_not_utf8_fail(tmp_path):
    long = "a-very-long-document-name-" * 4
    for name in ("esc\x1b[2J.md", f"{long}.md", "été.md"):
        (tmp_path / name).write_text("# T\n\nBody.\n", encoding="utf-8")
    (tmp_path / os.fsdecode(b"bad-\xff.md")).write_bytes(b"# Bad\n\nBody.\n")
    loaded = load_corpus(tmp_path)
    assert sorted(loaded.ids) == sorted(["esc\x1b[2J", long, "été"])
    assert [f.id for f in loaded.failed] == ["bad-\\xff"]


def test_index_status_lines_escape_document_ids():
    status = IndexStatus(stale={"s\x1b[2J": "changed"}, new=("n\u202e",), failed={"f\x07": "empty file"})
    text = "\n".join(status.lines())
    assert not any(ch in text for ch in ("\x1b", "\u202e", "\x07"))
    assert "s\\x1b[2J" in text and "n\\u202e" in text and "f\\x07" in text


def test_corpus_stats_keeps_its_columns_when_a_name_is_escaped(tmp_path, capsys):
    from ragkit.__main__ import main

    for name in ("plain.md", "esc\x1b[2J\u202e.md"):
        (tmp_path / name).write_text("# T\n\nBody.\n", encoding="utf-8")
    assert main(["corpus-stats", "--corpus", str(tmp_path)]) == 0
    table = capsys.readouterr().out.splitlines()[:4]  # the heading, two documents, the total
    assert table[1].startswith("esc\\x1b[2J\\u202e ") and len({len(line) for line in table}) == 1, table
