"""The generator's conversion as the cache keeps it: its own folder, its record checked, a changed file redone."""

import dataclasses
import json
import warnings

import pytest

from ragkit.plumbing import generator_export, onnx
from ragkit.plumbing.cache import CacheWarning


def fake_conversion(calls):
    """A stand-in for the child process: writes a graph and a tokenizer, and counts how often it ran."""

    def convert(source, into):
        calls.append(source)
        (into / "model.onnx").write_bytes(b"graph")
        (into / "tokenizer.json").write_text("{}", encoding="utf-8")

    return convert


def test_a_generator_export_has_its_own_folder_and_record_and_is_converted_once(tmp_path):
    calls = []
    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    first = onnx.onnx_export(
        source, "ab" * 32, tmp_path / "cache", kind="generator", graph="model.onnx", child=fake_conversion(calls)
    )
    assert first == tmp_path / "cache" / "generator" / ("ab" * 8)
    assert onnx.export_problem(first, "model.onnx") is None
    again = onnx.onnx_export(
        source, "ab" * 32, tmp_path / "cache", kind="generator", graph="model.onnx", child=fake_conversion(calls)
    )
    assert again == first and len(calls) == 1  # the verified export is used, not converted again


def test_two_that_need_the_export_at_once_convert_it_once(tmp_path):
    """A notebook asking for the generator while a warmer converts it waits for that conversion and reads it, rather
    than converting beside it (twice the cores and memory)."""
    import threading
    import time

    calls: list = []
    convert = fake_conversion(calls)

    def slow(source, into):
        time.sleep(0.5)  # long enough for the second to arrive while the first converts
        convert(source, into)

    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    got: list = []

    def need():
        got.append(
            onnx.onnx_export(source, "cd" * 32, tmp_path / "cache", kind="generator", graph="model.onnx", child=slow)
        )

    both = [threading.Thread(target=need) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    assert len(calls) == 1 and got[0] == got[1] == tmp_path / "cache" / "generator" / ("cd" * 8)
    assert onnx.export_problem(got[0], "model.onnx") is None


def test_a_lock_that_is_no_file_is_said_and_the_export_made_all_the_same(tmp_path):
    calls: list = []
    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    (tmp_path / "cache" / f".generator-{'ef' * 8}.export.lock").mkdir(parents=True)  # a folder where the lock goes
    with pytest.warns(CacheWarning, match=r"export\.lock cannot be used \(Is a directory\): exporting without it"):
        made = onnx.onnx_export(
            source, "ef" * 32, tmp_path / "cache", kind="generator", graph="model.onnx", child=fake_conversion(calls)
        )
    assert len(calls) == 1 and onnx.export_problem(made, "model.onnx") is None


def test_a_changed_generator_file_is_moved_aside_and_converted_again(tmp_path):
    calls = []
    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    made = onnx.onnx_export(
        source, "cd" * 32, tmp_path, kind="generator", graph="model.onnx", child=fake_conversion(calls)
    )
    (made / "model.onnx").write_bytes(b"tampered")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnx.onnx_export(
            source, "cd" * 32, tmp_path, kind="generator", graph="model.onnx", child=fake_conversion(calls)
        )
    assert len(calls) == 2 and (made / "model.onnx").read_bytes() == b"graph"
    assert any(issubclass(w.category, CacheWarning) and "model.onnx" in str(w.message) for w in caught)


def test_an_export_without_its_graph_is_not_accepted(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    onnx._write_record(tmp_path, "ef" * 32)
    assert "model.onnx" in onnx.export_problem(tmp_path, "model.onnx")


@pytest.mark.parametrize("pre, changed", [("ByteLevel", True), ("Metaspace", False)])
def test_a_byte_level_tokenizer_gets_the_decoder_that_undoes_it(tmp_path, pre, changed):
    """transformers writes a GGUF tokenizer's decoder as a Sequence onnxruntime-genai does not undo ("ĠThe")."""
    path = tmp_path / "tokenizer.json"
    before = {"pre_tokenizer": {"type": pre}, "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}]}}
    path.write_text(json.dumps(before), encoding="utf-8")
    generator_export.byte_level_decoder(path)
    after = json.loads(path.read_text(encoding="utf-8"))
    assert (after["decoder"] == generator_export.BYTE_LEVEL) is changed
    assert after["pre_tokenizer"] == before["pre_tokenizer"]


@pytest.mark.slow
def test_the_qwen_route_converts_a_hugging_face_folder_and_answers(tmp_path, monkeypatch):
    """Qwen2.5 (after `make models`) goes through the builder from a Hugging Face folder: tried on a tiny random Qwen2
    with SmolLM2's byte-level tokenizer and chat template standing in for Qwen's."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from ragkit import generation

    smol, _ = generation.exported()
    tokenizer = AutoTokenizer.from_pretrained(str(smol))
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    folder = tmp_path / "qwen"
    Qwen2ForCausalLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    monkeypatch.setenv("RAGKIT_GENERATOR", str(folder))
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "cache"))
    qwen = generation.Generator("Qwen2.5-0.5B-Instruct", max_new_tokens=5)
    assert (
        qwen.name == "Qwen2.5-0.5B-Instruct"
        and qwen.folder.parent == tmp_path / "cache" / "generator" / generation.EXPORT
    )
    assert qwen.chat("Which way?").endswith("<|im_start|>assistant\n")
    first = qwen.run("Which way does the gradient point?")
    assert 1 <= first.new_tokens <= 5 and not first.cached and qwen.calls == 1
    assert qwen.run("Which way does the gradient point?") == dataclasses.replace(first, cached=True)
    assert qwen.calls == 1
    for path in qwen.folder.iterdir():  # a shared cache's students read the teacher's conversion
        assert path.stat().st_mode & 0o044 == 0o044, f"{path.name} is not readable by group and others"


@pytest.mark.slow
def test_the_shipped_export_stores_its_products_in_8_bits_and_its_token_table_in_float16_for_everyone():
    """The 4-bit export quantised Q4_1 weights a second time (0 of 6 first sentences kept against float32); the 8-bit
    one keeps no float32 matrix of the model's size, and a shared cache's students can read every file."""
    import numpy as np
    import onnx as onnx_format
    from onnx import numpy_helper

    from ragkit import generation

    folder, _ = generation.exported()
    assert folder.parent.name == generation.EXPORT
    model = onnx_format.load(str(folder / generation.GRAPH))
    nodes = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    assert nodes and {a.i for n in nodes for a in n.attribute if a.name == "bits"} == {generator_export.QUANT_BITS}
    assert not [n for n in model.graph.node if n.op_type == "MatMul"]  # every product quantised
    big = {i.name: numpy_helper.to_array(i).dtype for i in model.graph.initializer if np.prod(i.dims) > 10**6}
    assert np.dtype(np.float32) not in big.values(), big
    assert np.dtype(np.float16) in big.values()  # the token table
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o044 == 0o044, f"{path.name} is not readable by group and others"


def test_an_export_written_private_is_readable_by_everyone(tmp_path):
    """onnx writes a model's weights file private (0600): a shared cache's students could not read it."""
    import os

    def private(source, into):
        (into / "sub").mkdir(mode=0o700)
        for name in ("model.onnx", "model.onnx.data", "tokenizer.json", "sub/extra.json"):
            (into / name).write_bytes(b"x")
            (into / name).chmod(0o600)

    before = os.umask(0o077)  # a teacher's strict umask: the record and the folders made are private too
    try:
        made = onnx.onnx_export(tmp_path / "w", "ab" * 32, tmp_path / "cache", kind="generator/r", child=private)
    finally:
        os.umask(before)
    for path in [made, *made.rglob("*"), made.parent, made.parent.parent]:
        wanted = 0o555 if path.is_dir() else 0o444
        assert path.stat().st_mode & wanted == wanted, f"{path} is not readable by everyone"
    assert onnx.EXPORT_RECORD in {p.name for p in made.iterdir()}


@pytest.mark.parametrize(
    "v2, v1, limit, cap",
    [
        ("max 100000", None, "", None),
        ("100000 100000", None, "", 1),
        ("150000 100000", None, "", 2),
        ("max 100000", None, "1", 1),
        ("max 100000", None, "inf", None),
        (None, ("100000", "100000"), "", 1),
        (None, ("-1", "100000"), "", None),
        (None, None, "", None),
    ],
)
def test_the_usable_cores_are_capped_by_the_cgroup_quota_and_the_hubs_cpu_limit(
    tmp_path, monkeypatch, v2, v1, limit, cap
):
    import os

    cpu_max, cfs = tmp_path / "cpu.max", tmp_path / "cpu" / "cpu.cfs_quota_us"
    if v2:
        cpu_max.write_text(v2 + "\n", encoding="ascii")
    if v1:
        cfs.parent.mkdir()
        cfs.write_text(v1[0] + "\n", encoding="ascii")
        (cfs.parent / "cpu.cfs_period_us").write_text(v1[1] + "\n", encoding="ascii")
    monkeypatch.setenv("CPU_LIMIT", limit)
    monkeypatch.setattr(onnx, "CPU_MAX", cpu_max)
    monkeypatch.setattr(onnx, "CFS_QUOTA", cfs)
    affinity = len(os.sched_getaffinity(0))
    assert onnx.usable_cores() == (affinity if cap is None else min(affinity, cap))
    monkeypatch.setenv("OMP_NUM_THREADS", "100000")  # a typo never starts more threads than the usable cores
    assert onnx.env_threads() == onnx.usable_cores()


@pytest.mark.slow
def test_the_shipped_export_computes_the_output_layer_for_the_last_position_alone():
    """Greedy reads the last position's logits only: the others' (2,800 rows of 49,152 in a long prompt, 13% of its
    time) are not computed."""
    import onnx as onnx_format

    from ragkit import generation

    folder, _ = generation.exported()
    model = onnx_format.load(str(folder / generation.GRAPH), load_external_data=False)
    logits = next(o for o in model.graph.output if o.name == "logits")
    dims = [d.dim_value or d.dim_param for d in logits.type.tensor_type.shape.dim]
    assert dims[1] == 1, dims
