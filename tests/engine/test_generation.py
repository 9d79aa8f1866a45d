"""Generation: the real transformers code path on a tiny random causal LM built here; missing model message."""

import pytest

from ragkit.answer import Answer, Generator, answer, available_generator, count_prompt_tokens
from ragkit.chunking import chunk_document
from ragkit.errors import ModelUnavailable
from ragkit.plumbing.models import GENERATOR, bundled_model_dir
from ragkit.retrieval import Retriever

from conftest import make_document


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """A randomly initialised Qwen2-shaped causal LM (2 layers, width 32) with a small chat template."""
    import torch
    from transformers import BertTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-lm")
    tok = BertTokenizerFast.from_pretrained(str(bundled_model_dir()))
    tok.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"
    config = Qwen2Config(vocab_size=tok.vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                         eos_token_id=tok.sep_token_id, pad_token_id=tok.pad_token_id)
    Qwen2ForCausalLM(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_greedy_generation_is_deterministic(tiny_lm):
    gen = Generator(tiny_lm, max_new_tokens=6)
    first = gen.generate("Answer using the sources. QUESTION what is a gradient?")
    assert isinstance(first, str) and first == gen.generate("Answer using the sources. QUESTION what is a gradient?")


def test_answer_with_a_generator_counts_with_its_tokenizer(tiny_lm):
    doc = make_document("# Doc\n\n## Gradients\nThe gradient points uphill.\n\n## Other\nPaella is not here.\n")
    retriever = Retriever(chunk_document(doc, "E"), progress=False)
    gen = Generator(tiny_lm, max_new_tokens=4)
    result = answer("Which way does the gradient point?", retriever, cut=None, generator=gen)
    assert isinstance(result, Answer) and result.text is not None and result.generator == str(tiny_lm)
    assert result.prompt_tokens == gen.count(result.prompt) and str(tiny_lm) in result.counted_with
    assert count_prompt_tokens(result.prompt)[1].startswith("all-MiniLM-L6-v2")


def test_missing_generator_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGKIT_MODELS_DIR", str(tmp_path))
    monkeypatch.delenv(GENERATOR.env, raising=False)
    with pytest.raises(ModelUnavailable, match="make models"):
        Generator()
    assert available_generator() is None
