"""Notebooks 05 and 07 in a Dutch kernel: their tables, table headings, printed lines and the values inside their
sentences (a truth, a p-value, who counted the tokens, a prediction's words) come out Dutch with the English figures;
in English every one of them is exactly what it was."""

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ragkit.answer import WORD_PIECES, Answer, NoAnswer, TokenCounter
from ragkit.chunking import Chunk
from ragkit.citations import CharRange, Citation
from ragkit.corpus import Corpus, Document
from ragkit.faithfulness import LostInTheMiddle, PromptRate, Rate, TwoHalves
from ragkit.statistics import SignTest, counts_test
from ragkit.teach import language
from ragkit.teach.lesson import formats, narrate, predict, tables
from ragkit.teach.lesson.narrate.citations import _refusal_words

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def english_again():
    with language.speaking("en"), pd.option_context("display.max_colwidth", None):  # as notebook 07 sets it
        yield


def both(make):
    """What ``make()`` gives in English and in Dutch."""
    with language.speaking("en"):
        english = make()
    with language.speaking("nl"):
        dutch = make()
    return english, dutch


def html(frame: pd.DataFrame) -> str:
    return frame._repr_html_()


# 07: the values inside the sentences


def one_chunk():
    text = "Intro. tail body of it."
    doc = Document("d", "D", text, ROOT / "data" / "corpus" / "d.md")
    start = text.index("body")
    f = Chunk(
        doc_id="d",
        doc_title="D",
        section="S",
        start=start,
        end=len(text),
        content=text[start:],
        overlap="tail ",
        header="D - S\n",
    )
    citation = Citation(1, "d", "D", "S", CharRange(start, len(text)), text[start:], 0.4)
    return Corpus(ROOT, (doc,)), citation, f


def test_the_checked_facts_of_a_quote_read_ja_or_nee_in_dutch_and_yes_or_no_in_english():
    corpus, citation, f = one_chunk()
    english, dutch = both(lambda: narrate.quote_or_text(corpus, citation, f).data)
    assert "in the document? **Yes**." in english and "anywhere in the document? **No**." in english
    assert "**True**" not in dutch and "**False**" not in dutch and "**Ja**" in dutch and "**Nee**" in dutch
    english, dutch = both(lambda: narrate.two_locators(corpus, citation).data)
    assert ": verifies **yes**." in english
    assert "**True**" not in dutch and "**ja**" in dutch


def test_a_sign_test_is_written_as_str_writes_it_in_english_and_with_a_decimal_comma_in_dutch():
    for test in (SignTest(4, 18, 0.00434), counts_test(7, 9), SignTest(0, 0, 1.0), counts_test(2, 2)):
        english, dutch = both(lambda test=test: tables.paired_test(test))
        assert english == str(test)
    assert both(lambda: tables.paired_test(SignTest(4, 18, 0.0043373)))[1] == "+4/-18; p = 0,00434"
    assert both(lambda: tables.paired_test(SignTest(0, 0, 1.0)))[1].startswith("geen discordante paren")
    rates = [
        PromptRate("dense", Rate(40, 64), None),
        PromptRate("bm25", Rate(26, 64), SignTest(4, 18, 0.0043373), 0.0086746, 0.31, 0.52),
    ]
    english, dutch = both(lambda: narrate.needle_in_prompt(rates, False).data)
    assert (
        "bm25 (+4/-18, p = 0.00434, Holm p = 0.00867)" in english
        and "bm25 (+4/-18; p = 0,00434; Holm-p = 0,00867)" in dutch
    )
    assert "Holm-adjusted over the 1 comparisons" in english or "over the 1 comparison" in english
    english, dutch = both(lambda: html(tables.prompt_rates(rates)))
    assert "+4/-18, p = 0.00434" in english and "+4/-18; p = 0,00434" in dutch and "0.00434" not in dutch
    assert "+4/-18, p = 0.00434, Holm p = 0.00867" in english and "Holm-p = 0,00867" in dutch
    assert "0.31 to 0.52" in english and "needles opnieuw getrokken" in dutch


def test_who_counted_the_tokens_is_said_in_dutch_and_exactly_as_the_engine_says_it_in_english():
    result = Answer("q", "prompt", (), 575, TokenCounter())
    english, dutch = both(lambda: narrate.prompt_length(result).data)
    assert f"counted with *{WORD_PIECES}*" in english
    assert "the encoder's tokenizer" not in dutch and "de tokenizer van de encoder" in dutch
    by_generator = Answer("q", "prompt", (), 629, TokenCounter("SmolLM2-135M-Instruct"))
    english, dutch = both(lambda: narrate.prompt_length(by_generator).data)
    assert "*SmolLM2-135M-Instruct tokenizer*" in english and "*de tokenizer van SmolLM2-135M-Instruct*" in dutch
    # the generator's name is a value, never cut out of an English phrase (issue 62): any name is said whole
    odd = Answer("q", "prompt", (), 629, TokenCounter("X's"))
    assert "*de tokenizer van X's*" in both(lambda: narrate.prompt_length(odd).data)[1]


def test_the_dutch_of_who_counted_does_not_read_the_engines_english(monkeypatch):
    """Reworded in the engine, the English phrase changes and the Dutch stays: the narrator renders the value."""
    by_generator = Answer("q", "prompt", (), 629, TokenCounter("SmolLM2-135M-Instruct"))
    before = both(lambda: narrate.prompt_length(by_generator).data)[1]
    monkeypatch.setattr(TokenCounter, "__str__", lambda self: f"counted by {self.generator or 'the encoder'}")
    assert both(lambda: narrate.prompt_length(by_generator).data)[1] == before
    facts = {
        4: pd.DataFrame({"tokens": [400.0], "sources": [4], "needle at": [1.0]}),
        20: pd.DataFrame({"tokens": [1600.0], "sources": [20], "needle at": [1.0]}),
    }
    english, dutch = both(lambda: narrate.retrieval_bill(facts, TokenCounter()).data)
    assert WORD_PIECES in english and WORD_PIECES not in dutch


def test_the_gates_printed_line_is_the_refusals_own_in_english_and_dutch_in_a_dutch_kernel():
    refused, nothing = NoAnswer("what is offside", 0.675), NoAnswer("what is offside", None)
    for reply in (refused, nothing):
        english, dutch = both(lambda reply=reply: narrate.gate_reply(reply.question, reply))
        assert english == str(reply)
        assert dutch.startswith("NO ANSWER: ") and '"what is offside"' in dutch and "nothing" not in dutch
    assert (
        both(lambda: narrate.gate_reply("q", refused))[1]
        == 'NO ANSWER: niets onder cosine-afstand 0,675 voor "what is offside"'
    )
    answered = Answer("which vector database", "prompt", (None,) * 4, 10, TokenCounter())  # type: ignore[arg-type]
    english, dutch = both(lambda: narrate.gate_reply("which vector database", answered))
    assert english == "ANSWERED with 4 sources: which vector database"
    assert dutch == "BEANTWOORD met 4 bronnen: which vector database"
    one = Answer("which vector database", "prompt", (None,), 10, TokenCounter())  # type: ignore[arg-type]
    assert both(lambda: narrate.gate_reply("q", one)) == ("ANSWERED with 1 source: q", "BEANTWOORD met 1 bron: q")


def test_the_refusal_predictions_words_are_shown_in_dutch_and_may_be_typed_in_dutch():
    options = ("both", "only the first", "only the second", "neither")
    assert both(_refusal_words) == (options, ("allebei", "alleen de eerste", "alleen de tweede", "geen van beide"))
    choice = predict.Choice(options)
    english, dutch = both(lambda: predict.reply("only the first", choice, "only the first"))
    assert "**only the first**" in english and "**alleen de eerste**" in dutch and "only the first" not in dutch
    assert "**alleen de eerste**" in both(lambda: predict.reply("alleen de eerste", choice, "only the first"))[1]


# 07: the tables


def test_the_verified_row_reads_ja_and_nee_under_a_dutch_heading_and_yes_and_no_in_english():
    checks = pd.Series({1: True, 2: True, 3: False}, name="verified")
    shown = formats.Frame(checks.to_frame().T)
    english, dutch = both(lambda: html(shown))
    assert english.count("<td>yes</td>") == 2 and english.count("<td>no</td>") == 1 and "True" not in english
    assert "geverifieerd" in dutch and "verified" not in dutch and "True" not in dutch
    assert dutch.count("<td>ja</td>") == 2 and dutch.count("<td>nee</td>") == 1
    assert dutch.count("<th>1</th>") == 1  # each column once: the truths replace their column, never join it


FOUND_HERE = [
    {"source": "[1]", "section": "S", "what is wrong with it": (), "first words": "This is"},
    {
        "source": "[2]",
        "section": "S",
        "what is wrong with it": ("starts inside a number", "starts mid-sentence"),
        "first words": "5 of them",
    },
]


def test_the_flaws_of_a_prompts_sources_are_words_of_the_kernels_language_and_the_rows_keep_their_values():
    english, dutch = both(lambda: html(tables.flaws_here(FOUND_HERE)))
    shown = pd.DataFrame(FOUND_HERE).set_index("source")
    shown["what is wrong with it"] = ["nothing we count", "starts inside a number; starts mid-sentence"]
    assert english == html(shown)
    assert "wat eraan mankeert" in dutch and "eerste woorden" in dutch and "bron" in dutch
    assert "niets dat we tellen" in dutch and "begint midden in een getal; begint midden in een zin" in dutch
    assert "nothing we count" not in dutch and FOUND_HERE[0]["what is wrong with it"] == ()


def test_a_chunks_flaws_are_named_by_the_pathologies_that_hold_it():
    from ragkit.chunking import FLAWS, Boundary, Pathologies

    def chunk(start):
        return Chunk("d", "D", "S", start, start + 10, "x" * 10)

    a, b, c = chunk(0), chunk(10), chunk(20)
    found = Pathologies("E", 3, (a,), (Boundary(a, b),), (Boundary(b, c),), (b,))
    assert found.of("d", 0) == ("only a heading", "ends inside a number")
    assert found.of("d", 10) == ("starts inside a number", "ends inside code", "starts mid-sentence")
    assert found.of("d", 20) == ("starts inside code",) and found.of("other", 0) == () and len(FLAWS) == 6


def facts(needle_at, tokens):
    return pd.DataFrame({"tokens": tokens, "sources": [4 if t == t else 0 for t in tokens], "needle at": needle_at})


def test_four_or_twenty_chunks_is_the_notebooks_old_table_in_english_and_dutch_in_a_dutch_kernel():
    prompts = {
        4: facts([1.0, np.nan, np.nan], [400.0, 380.0, math.nan]),
        20: facts([1.0, 7.0, np.nan], [1900.0, 2000.5, 2100.0]),
    }
    old = pd.DataFrame(
        {
            f"{k} chunks": {  # the cell of notebook 07 before this table moved into tables
                "prompts built": f"{int((f.sources > 0).sum())} of {len(f)}",
                "median prompt length (tokens)": f"{f.tokens.median():,.0f}",  # thousands separated, as people read
                "longest prompt (tokens)": f"{f.tokens.max():,.0f}",
                "prompts holding the needle": f"{int(f['needle at'].notna().sum())}",
                "median position of the needle": f"{f['needle at'].median():.0f}"
                if f["needle at"].notna().any()
                else "–",
                "needle past source 4": f"{int((f['needle at'] > 4).sum())}",
            }
            for k, f in prompts.items()
        }
    )
    english, dutch = both(lambda: html(tables.four_or_twenty(prompts)))
    assert english == html(old) and "2,100" in english
    assert "2.100" in dutch and "2 van 3" in dutch and "3 van 3" in dutch and "mediane promptlengte (tokens)" in dutch
    assert "needle na bron 4" in dutch and " of " not in dutch and "prompts built" not in dutch


def test_the_two_halves_and_the_lost_in_the_middle_tables_are_dutch_with_the_engines_figures():
    halves = TwoHalves(0, 7, 1, 4, 0)
    trial = lambda ok, at: SimpleNamespace(needle_recalled=ok, needle_at=at)  # noqa: E731
    lost = LostInTheMiddle(
        ("q1", "q2", "q3"),
        20,
        {
            "first": (trial(True, 1), trial(True, 1), trial(False, 1)),
            "middle": (trial(False, 10),) * 3,
            "last": (trial(False, 20),) * 3,
        },
    )
    m = SimpleNamespace(halves=halves, lost=lost)
    english, dutch = both(lambda: html(tables.halves_table(m)))
    assert english == html(  # what the engine's own English rows said, before the table read the values
        formats.Frame(
            [
                {
                    "prompt": label,
                    "needle recalled": rate.k,
                    "needle not recalled": rate.n - rate.k,
                    "needle-recall rate": f"{rate.share:.2f}",
                    "95% interval": f"{rate.low:.2f} to {rate.high:.2f}",
                }
                for label, rate in (
                    ("holds the needle", halves.with_needle),
                    ("lacks the needle", halves.without_needle),
                )
            ]
        ).set_index("prompt")
    )
    assert "bevat de needle" in dutch and "mist de needle" in dutch and "0,00 tot 0,35" in dutch
    assert "aandeel weergegeven" in dutch and "0,20" in dutch and "holds" not in dutch and "0.00" not in dutch
    english, dutch = both(lambda: html(tables.positions_table(m)))
    assert english == html(
        formats.Frame(
            [
                {
                    "needle placed": place,
                    "source number": at,
                    "recalled": lost.rate(place).k,
                    "asked": 3,
                    "95% interval": f"{lost.rate(place).low:.2f} to {lost.rate(place).high:.2f}",
                    "against the middle": against,
                }
                for place, at, against in (
                    ("first", 1, "+2/-0, p = 0.5"),
                    ("middle", 10, ""),
                    ("last", 20, "no discordant pairs, so nothing to test: p = 1"),
                )
            ]
        ).set_index("needle placed")
    )
    assert "vooraan" in dutch and "in het midden" in dutch and "achteraan" in dutch and "tegen het midden" in dutch
    assert "+2/-0; p = 0,5" in dutch and "geen discordante paren, niets te toetsen: p = 1" in dutch
    assert ">middle<" not in dutch and "0.00" not in dutch


# 05: the identity's tables, the norms and the correlations


def test_the_identitys_figures_are_written_with_a_decimal_comma_in_dutch_and_as_before_in_english():
    fmt = lambda v: "" if v is None else formats.formatted(v, ".2e" if abs(v) < 1e-3 else ".6f")  # noqa: E731
    old = lambda v: "" if v is None else (f"{v:.2e}" if abs(v) < 1e-3 else f"{v:.6f}")  # noqa: E731
    values, rows = [1.0, 0.7071, 2.38e-7, None], ["‖a‖", "L2 = ‖a − b‖", "|L2²/2 − (1 − cos)|", "x"]
    english, dutch = both(
        lambda: html(
            formats.Frame(
                {"this corpus": [fmt(v) for v in values], "un-normalised": [fmt(v) for v in values]}, index=rows
            )
        )
    )
    assert english == html(
        pd.DataFrame({"this corpus": [old(v) for v in values], "un-normalised": [old(v) for v in values]}, index=rows)
    )
    assert "1,000000" in dutch and "0,707100" in dutch and "2,38 · 10⁻⁷" in dutch and "‖a‖" in dutch
    assert "dit corpus" in dutch and "niet-genormaliseerd" in dutch and "this corpus" not in dutch


def test_a_correlation_table_has_dutch_row_and_column_headings_and_decimal_commas():
    lengths = formats.Frame(
        {
            "word pieces": [10, 20, 30, 45],
            "norm, un-normalised": [5.0, 4.1, 3.9, 3.2],
            "cosine distance": [0.5, 0.45, 0.41, 0.2],
        }
    )
    corr = lengths.corr().loc[["cosine distance"], ["word pieces", "norm, un-normalised"]].round(3)
    described = formats.Frame(lengths.describe().loc[["min", "50%", "max"]].round(3))
    english, dutch = both(lambda: html(corr))
    assert english == html(pd.DataFrame(corr))
    assert "<th>cosine-afstand</th>" in dutch and "norm, niet-genormaliseerd" in dutch and "-0,9" in dutch
    english, dutch = both(lambda: html(described))
    assert english == html(pd.DataFrame(described))
    assert "<th>word-pieces</th>" in dutch and "<th>norm, niet-genormaliseerd</th>" in dutch and "<td>3,2</td>" in dutch
