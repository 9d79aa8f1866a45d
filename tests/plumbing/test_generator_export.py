"""The generator's conversion as the cache keeps it: its own folder, its record checked, a changed file redone."""

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
    first = onnx.onnx_export(source, "ab" * 32, tmp_path / "cache", kind="generator", graph="model.onnx",
                             child=fake_conversion(calls))
    assert first == tmp_path / "cache" / "generator" / ("ab" * 8)
    assert onnx.export_problem(first, "model.onnx") is None
    again = onnx.onnx_export(source, "ab" * 32, tmp_path / "cache", kind="generator", graph="model.onnx",
                             child=fake_conversion(calls))
    assert again == first and len(calls) == 1  # the verified export is used, not converted again


def test_a_changed_generator_file_is_moved_aside_and_converted_again(tmp_path):
    calls = []
    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    made = onnx.onnx_export(source, "cd" * 32, tmp_path, kind="generator", graph="model.onnx",
                            child=fake_conversion(calls))
    (made / "model.onnx").write_bytes(b"tampered")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnx.onnx_export(source, "cd" * 32, tmp_path, kind="generator", graph="model.onnx",
                         child=fake_conversion(calls))
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
