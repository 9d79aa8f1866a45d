"""answer() from any retriever the course builds: the ranking chooses the candidates, the dense distance gates them."""

import numpy as np
import pytest

from ragkit.answer import Answer, NoAnswer, answer
from ragkit.chunking import chunk_corpus
from ragkit.corpus import load_corpus
from ragkit.errors import InputError
from ragkit.generation import Generation
from ragkit.retrieval import Retriever
from ragkit.threshold import KEEP

from conftest import CORPUS

QUESTION = "Why does the learning rate make gradient descent diverge?"


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    """One chapter's chunks (strategy E): a few hundred texts, seconds to embed from an empty cache."""
    import shutil

    folder = tmp_path_factory.mktemp("corpus")
    shutil.copy(CORPUS / "02-gradient-descent.md", folder)
    return Retriever(chunk_corpus(load_corpus(folder), "E"), strategy="E", progress=False)


class Longest:
    """A stand-in reranker: the longer the chunk text, the higher it scores."""

    name = "longest"

    def score(self, query, texts):
        return np.array([float(len(t)) for t in texts])


def expected(retriever, ranking, cut):
    """The gate by hand: the first KEEP of a ranking, only those under the cut by dense cosine distance."""
    distance = retriever.distances([QUESTION])[0]
    return [int(i) for i in ranking[:KEEP] if distance[i] < cut]


def runs(retriever):
    return {
        "dense": retriever.dense([QUESTION]).ranking[0],
        "bm25": retriever.bm25([QUESTION]).ranking[0],
        "hybrid": retriever.hybrid([QUESTION]).ranking[0],
    }


@pytest.mark.parametrize("ranked_by", ["dense", "bm25", "hybrid"])
def test_each_ranking_chooses_the_candidates_and_the_dense_distance_gates_them(retriever, ranked_by):
    ranking = runs(retriever)[ranked_by]
    distance = retriever.distances([QUESTION])[0]
    # a cut between the candidates' distances: some pass, some do not, so the test sees which distance decides
    cut = float(np.median(distance[ranking[:KEEP]]))
    result = answer(QUESTION, retriever, cut=cut, ranked_by=ranked_by)
    want = expected(retriever, ranking, cut)
    assert 0 < len(want) < KEEP
    assert isinstance(result, Answer) and result.retriever == ranked_by
    assert [c.index for c in result.citations] == list(range(1, len(want) + 1))
    assert [c.cosine_distance for c in result.citations] == pytest.approx([distance[i] for i in want])
    assert [c.quote for c in result.citations] == [retriever.chunks[i].quoted[2] for i in want]
    ungated = answer(QUESTION, retriever, cut=None, ranked_by=ranked_by)  # no cut: the ranking's own first KEEP
    assert [c.quote for c in ungated.citations] == [retriever.chunks[i].quoted[2] for i in ranking[:KEEP]]


def test_the_rankings_differ_here_so_the_test_above_tells_them_apart(retriever):
    tops = {name: tuple(ranking[:KEEP]) for name, ranking in runs(retriever).items()}
    assert len(set(tops.values())) == 3, tops


def test_a_reranker_reorders_the_chosen_ranking_before_the_gate(retriever):
    result = answer(QUESTION, retriever, cut=None, ranked_by="hybrid", reranker=Longest())
    ranking = retriever.reranked([QUESTION], Longest(), base=retriever.hybrid([QUESTION])).ranking[0]
    assert result.retriever == "hybrid+longest"
    assert [c.quote for c in result.citations] == [retriever.chunks[i].quoted[2] for i in ranking[:KEEP]]
    lengths = [len(retriever.chunks[i].text) for i in ranking[:KEEP]]
    assert lengths == sorted(lengths, reverse=True)


def test_a_refusal_names_its_retriever_and_calls_no_generator(retriever):
    class Exploding:
        name = "must not be called"

        def count(self, text):
            raise AssertionError("the model was asked to count for a refused question")

        def run(self, prompt):
            raise AssertionError("the model was called for a refused question")

    result = answer("how do i renew my spanish passport", retriever, cut=0.3, ranked_by="bm25", generator=Exploding())
    assert result == NoAnswer("how do i renew my spanish passport", 0.3, "bm25")


def test_an_unknown_ranking_is_refused(retriever):
    with pytest.raises(InputError, match="unknown retriever 'sparse': use one of dense, bm25, hybrid"):
        answer(QUESTION, retriever, ranked_by="sparse")


class Scripted:
    """A generator that writes a fixed text, and counts its calls."""

    name = "scripted"

    def __init__(self, text, stopped="end", seconds=0.5, new_tokens=7):
        self.text, self.stopped, self.seconds, self.new_tokens, self.calls = text, stopped, seconds, new_tokens, 0

    def count(self, text):
        return len(text.split())

    def run(self, prompt):
        self.calls += 1
        return Generation(self.text, self.name, self.count(prompt), self.new_tokens, self.seconds, self.stopped)


def test_written_by_counts_with_the_generators_tokenizer_and_keeps_its_run(retriever):
    bare = answer(QUESTION, retriever, cut=None)
    g = Scripted("It overshoots [1].")
    written = bare.written_by(g)
    assert bare.text is None and bare.generation is None and g.calls == 1
    assert written.text == "It overshoots [1]." and written.generator == "scripted"
    assert written.prompt_tokens == len(bare.prompt.split()) and str(written.counted_with) == "scripted tokenizer"
    assert written.generation.new_tokens == 7 and written.citations == bare.citations
    assert written.generation.chat_tokens == written.prompt_tokens  # the generator read the whole prompt


def test_valid_markers_get_their_locator_and_invalid_ones_are_counted_never_linked(retriever):
    result = answer(QUESTION, retriever, cut=None).written_by(Scripted("Too big a step [1][2]; see [9] and [0]."))
    cited = result.cited()
    first, second = result.citations[:2]
    assert cited.text == (
        f"Too big a step [1] ({first.document_id}{first.fragment})"
        f"[2] ({second.document_id}{second.fragment}); see [9: no such source] and "
        "[0: no such source]."
    )
    assert cited.unknown == (9, 0)
    assert cited.unknown_note.startswith("2 markers in the answer name no source ([9], [0])")
    assert answer(QUESTION, retriever, cut=None).cited() is None


@pytest.mark.parametrize(
    "stopped, words",
    [
        ("end", None),
        ("time", "time bound and was stopped after 2.5 s, 7 tokens"),
        ("length", "used all 7 new tokens"),
        ("repeat", "kept its first 7 tokens"),
    ],
)
def test_a_generation_cut_short_says_so_in_one_sentence(retriever, stopped, words):
    result = answer(QUESTION, retriever, cut=None).written_by(Scripted("It", stopped, seconds=2.5))
    if words is None:
        assert result.stop_note == ""
    else:
        assert words in result.stop_note and result.stop_note.endswith(".") and ". " not in result.stop_note
