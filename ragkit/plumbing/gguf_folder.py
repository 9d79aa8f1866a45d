"""A llama GGUF file as a float32 Hugging Face folder, by the ``gguf`` package and numpy (no torch, no transformers).

The generator's conversion (``generator_export``) hands onnxruntime-genai's builder a Hugging Face folder. transformers
can write one from a GGUF file, but it imports torch and builds the whole model to do so (most of the conversion's time:
``python -m benchmarks conversion`` times it). Here every tensor is dequantised by the ``gguf`` package (the function
transformers calls), renamed, and the query and key rows put back in the order llama.cpp's converter permuted; the
configuration, the generation settings and the byte-level BPE tokenizer are written as transformers 4.57 writes them for
such a file, so the builder makes the same export of it (tests/plumbing/test_gguf_folder.py compares the two folders).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.errors import InputError

__all__ = ["LAYER_NAMES", "NotLlama", "write_folder"]

LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
"""A llama layer's tensors: llama.cpp's name (``blk.N.<name>.weight``), the Hugging Face one (``model.layers.N.``)."""
GLOBAL_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}

REQUIRED = (
    "llama.block_count",
    "llama.context_length",
    "llama.embedding_length",
    "llama.feed_forward_length",
    "llama.attention.head_count",
    "llama.attention.layer_norm_rms_epsilon",
)
"""The llama keys the configuration is written from (the others have transformers' defaults)."""
TOKENIZER = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type")
"""The byte-level BPE tokenizer's keys: its vocabulary, merges and which tokens are special."""
SPECIAL = 3
"""llama.cpp's token type of a control token (``tokenizer.ggml.token_type``): the tokenizer's special tokens."""
LARGE = 1000000000000000019884624838656
"""transformers' model_max_length when a tokenizer names none (int(1e30))."""


class NotLlama(InputError):
    """A GGUF file this folder writer cannot read: another architecture, tokenizer or tensor, or a missing key."""


REMEDY = "convert a Hugging Face folder of the model instead (`python -m ragkit.plumbing.generator_export FOLDER OUT`)"


def _fields(reader) -> dict[str, Any]:
    """The file's metadata, each value as Python reads it (a list for an array, a str for text, a bool for a flag)."""
    from gguf import GGUFValueType

    def value(part, kind) -> Any:
        if kind == GGUFValueType.STRING:
            return bytes(part).decode("utf-8")
        item = part.tolist()[0]
        return bool(item) if kind == GGUFValueType.BOOL else item

    values: dict[str, Any] = {}
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or not field.types:
            continue
        if field.types[0] == GGUFValueType.ARRAY:
            values[name] = [value(field.parts[i], field.types[-1]) for i in field.data]
        else:
            values[name] = value(field.parts[field.data[0]], field.types[0])
    return values


def _reverse_permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """Rows of a query or key matrix in the order Hugging Face's rotary embedding reads (llama.cpp interleaves them)."""
    half = weights.shape[0] // heads // 2
    return weights.reshape(heads, half, 2, *weights.shape[1:]).swapaxes(2, 1).reshape(weights.shape)


def _tensors(reader, heads: int, kv_heads: int) -> dict[str, np.ndarray]:
    """Every tensor as float32 under its Hugging Face name."""
    from gguf import dequantize

    out: dict[str, np.ndarray] = {}
    for tensor in reader.tensors:
        parts = tensor.name.split(".")
        weights = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        if parts[0] == "blk" and len(parts) == 4 and parts[2] in LAYER_NAMES:
            if parts[2] == "attn_q":
                weights = _reverse_permute(weights, heads)
            elif parts[2] == "attn_k":
                weights = _reverse_permute(weights, kv_heads)
            name = f"model.layers.{parts[1]}.{LAYER_NAMES[parts[2]]}.{parts[3]}"
        elif len(parts) == 2 and parts[0] in GLOBAL_NAMES:
            name = f"{GLOBAL_NAMES[parts[0]]}.{parts[1]}"
        else:
            raise NotLlama(f"a tensor this reader does not know: {tensor.name}; {REMEDY}")
        out[name] = np.ascontiguousarray(weights)
    return out


def _config(meta: dict[str, Any], tied: bool) -> dict[str, Any]:
    """config.json: the llama keys transformers reads from the file, its defaults for the rest."""
    heads = int(meta["llama.attention.head_count"])
    hidden = int(meta["llama.embedding_length"])
    head_dim = int(meta.get("llama.rope.dimension_count", hidden // heads))  # transformers reads head_dim so
    return {
        "_model_name_or_path": meta.get("general.name", ""),
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "dtype": "float32",
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "head_dim": head_dim,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": int(meta["llama.feed_forward_length"]),
        "max_position_embeddings": int(meta["llama.context_length"]),
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": heads,
        "num_hidden_layers": int(meta["llama.block_count"]),
        "num_key_value_heads": int(meta.get("llama.attention.head_count_kv", heads)),
        "pad_token_id": meta.get("tokenizer.ggml.padding_token_id"),
        "pretraining_tp": 1,
        "rms_norm_eps": float(meta["llama.attention.layer_norm_rms_epsilon"]),
        "rope_scaling": None,
        "rope_theta": float(meta.get("llama.rope.freq_base", 10000.0)),
        "tie_word_embeddings": tied,
        "unk_token_id": meta.get("tokenizer.ggml.unknown_token_id"),
        "use_cache": True,
        "vocab_size": int(meta.get("llama.vocab_size", len(meta["tokenizer.ggml.tokens"]))),
    }


def _tokenizer(meta: dict[str, Any]):
    """The byte-level BPE tokenizer (``tokenizers``) and its tokenizer_config.json, as transformers converts them."""
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE

    tokens: list[str] = list(meta["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ")) for m in meta["tokenizer.ggml.merges"]]
    unk, bos = meta.get("tokenizer.ggml.unknown_token_id"), meta.get("tokenizer.ggml.bos_token_id")
    unk_token = tokens[unk] if unk is not None else None
    bos_token = tokens[bos] if bos is not None else None
    tokenizer = Tokenizer(
        BPE({t: i for i, t in enumerate(tokens)}, merges, unk_token=unk_token, fuse_unk=True, byte_fallback=True)
    )
    specials = [i for i, kind in enumerate(meta["tokenizer.ggml.token_type"]) if kind == SPECIAL]
    tokenizer.add_special_tokens([AddedToken(tokens[i], normalized=False, special=True) for i in specials])
    tokenizer.normalizer = normalizers.Sequence([])
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)
    steps = [decoders.ByteFallback(), decoders.Fuse(), decoders.Replace("▁", " "), decoders.ByteLevel()]
    if meta.get("tokenizer.ggml.add_space_prefix", True):  # a space the encoder would have added, taken off again
        steps.append(decoders.Strip(content=" ", left=1, right=0))
    tokenizer.decoder = decoders.Sequence(steps)
    if bos_token is not None:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos_token}:0 $A:0",
            pair=f"{bos_token}:0 $A:0 {bos_token}:1 $B:1",
            special_tokens=[(bos_token, bos)],
        )
    added = {
        str(i): {
            "content": tokens[i],
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for i in specials
    }
    # As transformers 4.57 writes them: a beginning token added to every text, whatever the file's add_bos_token says
    # (onnxruntime-genai's tokenizer adds none either way), and the beginning token named as the end one too (its
    # converter reads eos from bos_token_id; the model's generation settings keep the real end, which the runtime
    # stops on)
    config = {
        "add_bos_token": True,
        "add_eos_token": False,
        "add_prefix_space": None,
        "added_tokens_decoder": added,
        "bos_token": bos_token,
        "bos_token_id": bos,
        "clean_up_tokenization_spaces": True,
        "eos_token": bos_token,
        "eos_token_id": bos,
        "extra_special_tokens": {},
        "legacy": True,
        "model_max_length": LARGE,
        "model_type": meta["tokenizer.ggml.model"],
        "pad_token_id": None,
        "tokenizer_class": "LlamaTokenizer",
        "unk_token": unk_token,
        "unk_token_id": unk,
        "use_default_system_prompt": False,
    }
    return tokenizer, config


def _dump(data: Any, path: Path) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def write_folder(gguf_file: Path, into: Path) -> None:
    """``gguf_file`` (llama architecture, a byte-level BPE tokenizer) as a float32 Hugging Face folder ``into``."""
    from gguf import GGUFReader
    from safetensors.numpy import save_file

    reader = GGUFReader(gguf_file)
    meta = _fields(reader)
    if meta.get("general.architecture") != "llama" or meta.get("tokenizer.ggml.model") != "gpt2":
        raise NotLlama(
            f"{gguf_file.name} is a {meta.get('general.architecture')} model with a "
            f"{meta.get('tokenizer.ggml.model')} tokenizer: only llama with a byte-level BPE (gpt2) one is read here; "
            f"{REMEDY}"
        )
    missing = [k for k in (*REQUIRED, *TOKENIZER) if k not in meta]
    if missing:
        raise NotLlama(f"{gguf_file.name} has no {', '.join(missing)}: ragkit cannot write its folder; {REMEDY}")
    heads = int(meta["llama.attention.head_count"])
    tensors = _tensors(reader, heads, int(meta.get("llama.attention.head_count_kv", heads)))
    into.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(into / "model.safetensors"), metadata={"format": "pt"})
    _dump(_config(meta, tied="lm_head.weight" not in tensors), into / "config.json")
    generation = {
        k: meta.get(f"tokenizer.ggml.{g}")
        for k, g in (
            ("bos_token_id", "bos_token_id"),
            ("eos_token_id", "eos_token_id"),
            ("pad_token_id", "padding_token_id"),
        )
    }
    _dump(
        {"_from_model_config": True, **{k: v for k, v in generation.items() if v is not None}},
        into / "generation_config.json",
    )
    tokenizer, config = _tokenizer(meta)
    tokenizer.save(str(into / "tokenizer.json"))
    _dump(config, into / "tokenizer_config.json")
    specials = {"bos_token": config["bos_token"], "eos_token": config["eos_token"], "unk_token": config["unk_token"]}
    _dump({k: v for k, v in specials.items() if v is not None}, into / "special_tokens_map.json")
    if template := meta.get("tokenizer.chat_template"):
        (into / "chat_template.jinja").write_text(template, encoding="utf-8")
