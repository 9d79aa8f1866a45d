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
