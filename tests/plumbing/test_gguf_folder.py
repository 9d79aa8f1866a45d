"""The GGUF file as a Hugging Face folder without torch: the same folder transformers writes, on a small llama file."""

import json
import subprocess
import sys

import numpy as np
import pytest

from ragkit.plumbing import gguf_folder

TEMPLATE = "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}"


def byte_level_alphabet() -> list[str]:
    """GPT-2's 256 byte-level characters (the symbols a byte-level BPE vocabulary starts from)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted, n = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            shifted.append(256 + n)
            n += 1
    return [chr(c) for c in shifted]


def small_llama(path, layers: int = 2, hidden: int = 64, heads: int = 4, kv_heads: int = 2, ff: int = 128) -> None:
    """A llama GGUF file with random weights in the file's own formats (Q8_0 table, Q4_1 layers, float32 norms) and a
    byte-level BPE tokenizer with three control tokens and a few merges."""
    import gguf
    from gguf import GGMLQuantizationType as Q
    from gguf import quants

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    merges = ["Ġ t", "h e", "Ġt he", "i n"]
    tokens = [*specials, *byte_level_alphabet(), *(m.replace(" ", "") for m in merges)]
    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("small llama")
    writer.add_block_count(layers)
    writer.add_context_length(256)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(100000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_rope_dimension_count(hidden // heads)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(tokens)
    writer.add_token_types([3] * len(specials) + [1] * (len(tokens) - len(specials)))
    writer.add_token_merges(merges)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_pad_token_id(2)
    writer.add_add_bos_token(False)
    writer.add_chat_template(TEMPLATE)

    def add(name, shape, kind):
        values = rng.standard_normal(shape).astype(np.float32)
        if kind == Q.F32:
            writer.add_tensor(name, values)
        else:
            writer.add_tensor(name, quants.quantize(values, kind), raw_dtype=kind)

    head = hidden // heads
    add("token_embd.weight", (len(tokens), hidden), Q.Q8_0)
    for i in range(layers):
        add(f"blk.{i}.attn_norm.weight", (hidden,), Q.F32)
        add(f"blk.{i}.attn_q.weight", (hidden, hidden), Q.Q4_1)
        add(f"blk.{i}.attn_k.weight", (kv_heads * head, hidden), Q.Q4_1)
        add(f"blk.{i}.attn_v.weight", (kv_heads * head, hidden), Q.Q4_1)
        add(f"blk.{i}.attn_output.weight", (hidden, hidden), Q.Q4_1)
        add(f"blk.{i}.ffn_norm.weight", (hidden,), Q.F32)
        add(f"blk.{i}.ffn_gate.weight", (ff, hidden), Q.Q4_1)
        add(f"blk.{i}.ffn_up.weight", (ff, hidden), Q.Q4_1)
        add(f"blk.{i}.ffn_down.weight", (hidden, ff), Q.Q4_1)
    add("output_norm.weight", (hidden,), Q.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


TRANSFORMERS_ROUTE = """
import json, sys
from pathlib import Path
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging
logging.set_verbosity_error(); logging.disable_progress_bar()
source, into = Path(sys.argv[1]), Path(sys.argv[2])
tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
model = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name)
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.save_pretrained(str(into))
tokenizer.save_pretrained(str(into))
"""
"""The folder ragkit wrote from a GGUF file until now: transformers reads it (with torch) and saves it."""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A small llama GGUF file written as a folder by ragkit and, in a child process, by transformers."""
    tmp = tmp_path_factory.mktemp("gguf")
    small_llama(tmp / "small.gguf")
    gguf_folder.write_folder(tmp / "small.gguf", tmp / "ragkit")
    done = subprocess.run(
        [sys.executable, "-c", TRANSFORMERS_ROUTE, str(tmp / "small.gguf"), str(tmp / "transformers")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp / "ragkit", tmp / "transformers"


@pytest.mark.slow  # transformers' route runs in a child process that imports torch: a model conversion
def test_the_weights_are_transformers_dequantised_ones_bit_for_bit(folders):
    from safetensors.numpy import load_file

    ours, theirs = (load_file(str(folder / "model.safetensors")) for folder in folders)
    assert set(ours) == set(theirs) and "model.layers.1.self_attn.k_proj.weight" in ours
    for name in theirs:
        assert ours[name].dtype == theirs[name].dtype == np.float32, name
        assert np.array_equal(ours[name], theirs[name]), f"{name} differs from transformers' (rows out of order?)"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"],
)
def test_the_settings_and_the_tokenizer_say_what_transformers_writes(folders, name):
    ours, theirs = (json.loads((folder / name).read_text(encoding="utf-8")) for folder in folders)
    theirs.pop("transformers_version", None)
    assert ours == theirs


@pytest.mark.slow
def test_the_chat_template_is_the_files(folders):
    ours, theirs = ((folder / "chat_template.jinja").read_text(encoding="utf-8") for folder in folders)
    assert ours == theirs == TEMPLATE


@pytest.mark.slow
def test_the_tokenizer_encodes_as_transformers_does(folders):
    from tokenizers import Tokenizer

    text = "<|im_start|>user\nin the thin tin<|im_end|>\n"
    ours, theirs = (Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids for folder in folders)
    assert ours == theirs and ours[:2] == [1, 1]  # transformers' beginning token, then the text's own


def test_another_architecture_is_refused_by_name(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "other.gguf"), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(gguf_folder.NotLlama, match=r"other\.gguf is a gpt2 model"):
        gguf_folder.write_folder(tmp_path / "other.gguf", tmp_path / "out")


def test_a_missing_key_or_an_unknown_tensor_is_refused_by_name_with_what_to_do(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "bare.gguf"), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(
        gguf_folder.NotLlama, match=r"bare\.gguf has no llama\.context_length.*tokenizer\.ggml\.token_type"
    ):
        gguf_folder.write_folder(tmp_path / "bare.gguf", tmp_path / "out")
    small_llama(tmp_path / "small.gguf")
    reader = gguf.GGUFReader(str(tmp_path / "small.gguf"))
    odd = type(
        "Tensor",
        (),
        {"name": "rope_freqs.weight", "data": reader.tensors[1].data, "tensor_type": reader.tensors[1].tensor_type},
    )
    with pytest.raises(gguf_folder.NotLlama, match=r"rope_freqs\.weight; convert a Hugging Face folder"):
        gguf_folder._tensors(type("Reader", (), {"tensors": [odd]}), 4, 2)
