"""The result store: a stamp's payload read back, from the private cache first, then the teacher's shared one."""

import os

from ragkit.plumbing import results

STAMP = {"model": "m", "prompt": "p"}


def test_a_result_the_teacher_filed_in_the_shared_cache_is_read_by_a_student(tmp_path, monkeypatch):
    shared, private = tmp_path / "shared", tmp_path / "student"
    assert results.write_result("generation", STAMP, {"text": "from the teacher"}, shared) == ""
    monkeypatch.setenv("RAGKIT_CACHE", str(private))
    monkeypatch.delenv("RAGKIT_SHARED_CACHE", raising=False)
    assert results.read_result("generation", STAMP) is None  # no shared cache named: a miss
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(shared))
    assert results.read_result("generation", STAMP) == {"text": "from the teacher"}
    assert results.read_result("generation", {**STAMP, "prompt": "other"}) is None  # another stamp is never read
    assert not private.exists()  # reading wrote nothing of the student's


def test_the_private_result_comes_first_and_a_folder_named_is_the_only_one_read(tmp_path, monkeypatch):
    shared, private = tmp_path / "shared", tmp_path / "student"
    results.write_result("generation", STAMP, {"text": "shared"}, shared)
    results.write_result("generation", STAMP, {"text": "mine"}, private)
    monkeypatch.setenv("RAGKIT_CACHE", str(private))
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(shared))
    assert results.read_result("generation", STAMP) == {"text": "mine"}
    assert results.read_result("generation", STAMP, tmp_path / "elsewhere") is None


def test_a_shared_result_others_could_change_is_not_trusted(tmp_path, monkeypatch):
    """A student who could write the shared file could feed every classmate's notebook its figures."""
    shared = tmp_path / "shared"
    results.write_result("generation", STAMP, {"text": "planted"}, shared)
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "student"))
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(shared))
    path = results.path_for("generation", STAMP, shared)
    os.chmod(path, 0o666)
    assert results.read_result("generation", STAMP) is None
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o777)
    assert results.read_result("generation", STAMP) is None
    os.chmod(path.parent, 0o755)
    assert results.read_result("generation", STAMP) == {"text": "planted"}


def test_an_attachment_is_read_back_only_with_the_checksum_its_result_recorded(tmp_path):
    """A graph stored beside its result (exercise 7's) is read only whole and unchanged: else it is built again."""
    data = bytes(range(256)) * 100
    assert results.write_result("graph", STAMP, {"rows": 3}, tmp_path, attachment=data) == ""
    assert results.read_attachment("graph", STAMP, tmp_path) == ({"rows": 3}, data)
    assert results.read_attachment("graph", {**STAMP, "prompt": "other"}, tmp_path) is None
    beside = results.path_for("graph", STAMP, tmp_path).with_suffix(".bin")
    beside.write_bytes(data[:-1])  # cut short
    assert results.read_attachment("graph", STAMP, tmp_path) is None
    beside.write_bytes(b"\xff" + data[1:])  # one byte changed
    assert results.read_attachment("graph", STAMP, tmp_path) is None
    beside.unlink()
    assert results.read_attachment("graph", STAMP, tmp_path) is None
    assert results.read_result("graph", STAMP, tmp_path) == {"rows": 3}  # the payload alone still reads
    results.write_result("plain", STAMP, {"rows": 1}, tmp_path)
    assert results.read_attachment("plain", STAMP, tmp_path) is None  # a result filed with no attachment has none


def test_a_shared_attachment_is_read_only_when_nobody_else_could_change_it_and_never_through_a_link(
    tmp_path, monkeypatch
):
    """A kernel in the grader's sandbox reads exercise 7's graphs from the snapshot, a shared cache: never a file a
    classmate could have written, nor one a link points at."""
    shared = tmp_path / "shared"
    results.write_result("graph", STAMP, {"rows": 3}, shared, attachment=b"a graph")
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "student"))
    monkeypatch.setenv("RAGKIT_SHARED_CACHE", str(shared))
    assert results.read_attachment("graph", STAMP) == ({"rows": 3}, b"a graph")
    beside = results.path_for("graph", STAMP, shared).with_suffix(".bin")
    os.chmod(beside, 0o666)
    assert results.read_attachment("graph", STAMP) is None
    os.chmod(beside, 0o644)
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(b"a graph")
    beside.unlink()
    beside.symlink_to(elsewhere)
    assert results.read_attachment("graph", STAMP) is None
