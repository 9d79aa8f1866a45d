"""The SQLite vector cache: keys bound to vectors, concurrent writers, damaged, read-only, full and shared caches."""

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from ragkit.errors import InputError
from ragkit.plumbing import cache as cache_module
from ragkit.plumbing.cache import CACHE_FILE, CacheWarning, VectorCache, finish_shared, text_key

from conftest import ROOT

STAMP, DIMS = "test-stamp-w256-d8", 8


def unit_rows(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def keys(n: int, prefix: str = "text") -> list[bytes]:
    return [text_key(f"{prefix} {i}") for i in range(n)]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_row_read_back_is_the_row_written(tmp_path):
    k, v = keys(3), unit_rows(3)
    VectorCache(tmp_path, STAMP, DIMS).put("unit", k, v)
    got = VectorCache(tmp_path, STAMP, DIMS).get("unit", k + [text_key("absent")])
    assert np.array_equal(np.stack(got[:3]), v) and got[3] is None


def test_token_blocks_and_pooled_vectors_round_trip(tmp_path):
    blocks = [unit_rows(5).astype(np.float16), unit_rows(2, seed=1).astype(np.float16)]
    pooled = unit_rows(2) * 3.5
    cache = VectorCache(tmp_path, STAMP, DIMS)
    cache.put("tokens", keys(2), blocks)
    cache.put("pooled", keys(2), pooled)
    again = VectorCache(tmp_path, STAMP, DIMS)
    assert [b.shape for b in again.get("tokens", keys(2))] == [(5, DIMS), (2, DIMS)]
    assert np.array_equal(np.stack(again.get("pooled", keys(2))), pooled)
    assert again.get("unit", keys(2)) == [None, None]  # kinds never mix


def test_keys_ending_in_zero_bytes_survive_the_disk(tmp_path):
    k = [b"\x01" * 31 + b"\x00", b"\x02" + b"\x00" * 31]
    VectorCache(tmp_path, STAMP, DIMS).put("unit", k, unit_rows(2))
    assert all(v is not None for v in VectorCache(tmp_path, STAMP, DIMS).get("unit", k))


def test_swapped_keys_never_return_the_other_texts_vector(tmp_path):
    """Defect 9: the checksum binds a key to its vector, so two keys swapped on disk are both refused."""
    k, v = keys(2), unit_rows(2)
    VectorCache(tmp_path, STAMP, DIMS).put("unit", k, v)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        for old, new in ((k[0], b"tmp"), (k[1], k[0]), (b"tmp", k[1])):
            db.execute("UPDATE vectors SET key = ? WHERE key = ?", (new, old))
    with pytest.warns(CacheWarning, match="2 cached vector"):
        assert VectorCache(tmp_path, STAMP, DIMS).get("unit", k) == [None, None]


def test_rows_of_another_stamp_or_flipped_bytes_are_refused(tmp_path):
    k, v = keys(2), unit_rows(2)
    VectorCache(tmp_path, STAMP, DIMS).put("unit", k, v)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("UPDATE vectors SET stamp = 'other-model' WHERE key = ?", (k[0],))
        flipped = bytearray(v[1].tobytes())
        flipped[0] ^= 0xFF
        db.execute("UPDATE vectors SET data = ? WHERE key = ?", (bytes(flipped), k[1]))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = VectorCache(tmp_path, STAMP, DIMS).get("unit", k)
    assert got == [None, None] and len(seen) == 1  # the foreign stamp is simply no hit; the flipped row is named


def test_a_garbage_database_is_moved_aside_with_one_warning_and_rebuilt(tmp_path):
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database at all" * 100)
    cache = VectorCache(tmp_path, STAMP, DIMS)
    with pytest.warns(CacheWarning, match="damaged.*moved aside") as seen:
        assert cache.get("unit", keys(1)) == [None]
        cache.put("unit", keys(1), unit_rows(1))
        assert cache.get("unit", keys(1))[0] is not None
    assert len(seen) == 1
    assert [p.name.split(".damaged-")[0] for p in tmp_path.glob("*.damaged-*")] == [CACHE_FILE]


def test_a_database_damaged_mid_file_is_set_aside_when_read(tmp_path):
    k = keys(400)
    first = VectorCache(tmp_path, STAMP, DIMS)
    first.put("unit", k, unit_rows(400))
    first.close()  # the last connection folds the WAL into the file
    path = tmp_path / CACHE_FILE
    assert not path.with_name(CACHE_FILE + "-wal").exists() and path.stat().st_size > 20_000
    raw = bytearray(path.read_bytes())
    raw[4096 : len(raw) - 4096] = b"\xaa" * (len(raw) - 8192)  # keep the header, wreck the pages
    path.write_bytes(bytes(raw))
    with pytest.warns(CacheWarning, match="damaged|cannot be read"):
        got = VectorCache(tmp_path, STAMP, DIMS).get("unit", k)
    assert all(g is None for g in got)


def test_a_cache_location_that_is_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "cache").write_text("oops")
    with pytest.raises(InputError, match=r"is a file, not a folder.*RAGKIT_CACHE"):
        VectorCache(tmp_path / "cache", STAMP, DIMS).get("unit", keys(1))


FILL = textwrap.dedent("""
    import sys
    import numpy as np
    from ragkit.plumbing.cache import VectorCache, text_key
    folder, name = sys.argv[1], sys.argv[2]
    cache = VectorCache(folder, "test-stamp-w256-d8", 8)
    for batch in range(20):
        ks = [text_key(f"{name} {batch} {i}") for i in range(50)]
        v = np.random.default_rng(batch).normal(size=(50, 8)).astype(np.float32)
        cache.put("unit", ks, v / np.linalg.norm(v, axis=1, keepdims=True))
    print("ok")
""")


OPEN_AT_ONCE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from ragkit.plumbing.cache import VectorCache, text_key
    root, name, count, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for r in range(rounds):
        (root / f"ready-{r}-{name}").touch()
        while len(list(root.glob(f"ready-{r}-*"))) < count:  # a barrier: all open a new cache at the same moment
            time.sleep(0.001)
        cache = VectorCache(root / f"cache-{r}", "test-stamp-w256-d8", 8)
        cache.put("unit", [text_key(name)], np.full((1, 8), 8 ** -0.5, dtype=np.float32))
        cache.close()
    print("ok")
""")


def test_processes_creating_one_new_cache_at_the_same_moment_all_write_it(tmp_path):
    """A notebook and the warmer start on an empty cache together: neither may fall back to not saving."""
    count, rounds = 6, 8
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AT_ONCE, str(tmp_path), f"p{i}", str(count), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [o[0].strip() for o in outs] == ["ok"] * count and not any(o[1] for o in outs), outs
    for r in range(rounds):
        got = VectorCache(tmp_path / f"cache-{r}", STAMP, DIMS).get("unit", [text_key(f"p{i}") for i in range(count)])
        assert all(g is not None for g in got), r


def test_a_cache_locked_past_the_wait_is_read_without_saving_and_says_so(tmp_path, monkeypatch):
    VectorCache(tmp_path, STAMP, DIMS).put("unit", keys(3), unit_rows(3))
    holder = sqlite3.connect(tmp_path / CACHE_FILE, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process is writing and does not let go
    monkeypatch.setattr(cache_module, "BUSY_SECONDS", 0.2)
    monkeypatch.setattr(cache_module, "_WARNED", set())
    late = VectorCache(tmp_path, STAMP, DIMS)
    with pytest.warns(CacheWarning, match="locked by another process"):
        late.put("unit", keys(4), unit_rows(4))
    assert [g is not None for g in late.get("unit", keys(4))] == [True, True, True, False]
    holder.execute("ROLLBACK")
    holder.close()
    assert VectorCache(tmp_path, STAMP, DIMS).get("unit", keys(4))[3] is None  # nothing written, nothing lost


def test_two_processes_filling_one_cache_both_succeed(tmp_path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FILL, str(tmp_path), name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name in ("first", "second")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(o[0].strip() == "ok" and "Warning" not in o[1] for o in outs), outs
    cache = VectorCache(tmp_path, STAMP, DIMS)
    for name in ("first", "second"):
        got = cache.get("unit", [text_key(f"{name} {b} {i}") for b in range(20) for i in range(50)])
        assert all(g is not None for g in got)


def remount_readonly(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def test_a_read_only_cache_is_read_and_never_written(tmpfs):
    where = tmpfs("1m")
    first = VectorCache(where, STAMP, DIMS)
    first.put("unit", keys(2), unit_rows(2))
    first.close()
    remount_readonly(where)
    before = sha(where / CACHE_FILE)
    cache = VectorCache(where, STAMP, DIMS)
    with pytest.warns(CacheWarning, match="cannot write the vector cache") as seen:
        assert all(v is not None for v in cache.get("unit", keys(2)))
        cache.put("unit", keys(3, "new"), unit_rows(3))
        cache.put("unit", keys(3, "newer"), unit_rows(3))
    assert len(seen) == 1 and sha(where / CACHE_FILE) == before


def test_a_read_only_empty_cache_folder_runs_without_a_cache(tmpfs):
    where = tmpfs("1m")
    remount_readonly(where)
    cache = VectorCache(where, STAMP, DIMS)
    with pytest.warns(CacheWarning, match="cannot write"):
        assert cache.get("unit", keys(1)) == [None]
        cache.put("unit", keys(1), unit_rows(1))
    assert not (where / CACHE_FILE).exists()


def test_a_full_disk_turns_writing_off_with_one_warning(tmpfs):
    where = tmpfs("320k")
    cache = VectorCache(where, STAMP, DIMS)
    big = [unit_rows(300, seed=i).astype(np.float16) for i in range(6)]
    with pytest.warns(CacheWarning, match="cannot write the vector cache") as seen:
        for i in range(10):
            cache.put("tokens", [text_key(f"big {i} {j}") for j in range(6)], big)
    assert len(seen) == 1
    assert VectorCache(where, STAMP, DIMS).get("tokens", [text_key("big 0 0")])[0] is not None


# -- the layered cache (a teacher's read-only shared cache, then the student's own) -------------------------


@pytest.fixture
def shared(tmp_path):
    folder = tmp_path / "shared"
    filler = VectorCache(folder, STAMP, DIMS)
    filler.put("unit", keys(3), unit_rows(3))
    filler.close()
    finish_shared(folder)
    for p in [folder, *folder.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    yield folder
    folder.chmod(0o755)


def test_a_hit_in_the_shared_cache_is_used_and_a_miss_written_privately(shared, tmp_path):
    before = sha(shared / CACHE_FILE)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=shared)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cache.get("unit", keys(3))
        assert np.array_equal(np.stack(got), unit_rows(3))
        cache.put("unit", keys(2, "own"), unit_rows(2, seed=5))
    assert sha(shared / CACHE_FILE) == before and sorted(p.name for p in shared.iterdir()) == [CACHE_FILE]
    private = VectorCache(tmp_path / "mine", STAMP, DIMS)
    assert private.get("unit", keys(3)) == [None] * 3  # nothing of the shared one was copied
    assert all(v is not None for v in private.get("unit", keys(2, "own")))


def test_a_damaged_shared_entry_is_skipped_and_computed_privately(shared, tmp_path):
    shared.chmod(0o755)
    (shared / CACHE_FILE).chmod(0o644)
    with sqlite3.connect(shared / CACHE_FILE) as db:
        db.execute("UPDATE vectors SET checksum = checksum + 1 WHERE key = ?", (keys(3)[1],))
    (shared / CACHE_FILE).chmod(0o444)
    shared.chmod(0o555)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=shared)
    with pytest.warns(CacheWarning, match="1 cached vector"):
        got = cache.get("unit", keys(3))
    assert got[1] is None and got[0] is not None and got[2] is not None


def test_a_shared_cache_of_another_model_is_refused_once(shared, tmp_path):
    cache = VectorCache(tmp_path / "mine", "another-model-w256-d8", DIMS, shared=shared)
    with pytest.warns(CacheWarning, match="another model") as seen:
        assert cache.get("unit", keys(3)) == [None] * 3
        assert cache.get("unit", keys(3)) == [None] * 3
    assert len(seen) == 1


@pytest.mark.parametrize("case", ["missing", "empty", "writable by others", "garbage"])
def test_an_unusable_shared_cache_says_so_once_and_falls_back(case, tmp_path):
    folder = tmp_path / "shared"
    if case != "missing":
        folder.mkdir()
    if case == "writable by others":
        filler = VectorCache(folder, STAMP, DIMS)
        filler.put("unit", keys(3), unit_rows(3))
        filler.close()
        finish_shared(folder)
        folder.chmod(0o777)
    if case == "garbage":
        (folder / CACHE_FILE).write_bytes(b"\x00garbage" * 512)
        (folder / CACHE_FILE).chmod(0o444)
        folder.chmod(0o555)
    files = {p.name: sha(p) for p in folder.iterdir()} if folder.exists() else {}
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=folder)
    with pytest.warns(CacheWarning, match="shared cache") as seen:
        assert cache.get("unit", keys(3)) == [None] * 3
        cache.put("unit", keys(3), unit_rows(3))
        assert all(v is not None for v in cache.get("unit", keys(3)))
    assert len(seen) == 1
    assert ({p.name: sha(p) for p in folder.iterdir()} if folder.exists() else {}) == files
    if folder.exists():
        folder.chmod(0o755)


def test_cache_command_shows_the_layers_and_clears_only_the_private_cache(tmp_path, monkeypatch, capsys):
    from ragkit.__main__ import main
    from ragkit.embedding import default_embedder

    private = tmp_path / "private"
    filler = VectorCache(private, default_embedder().stamp.namespace, 384)
    filler.put("unit", keys(2), np.eye(2, 384, dtype=np.float32))
    filler.close()
    (private / "vectors").mkdir()  # an older ragkit's pack folder
    monkeypatch.setenv("RAGKIT_CACHE", str(private))
    default_embedder.cache_clear()
    try:
        with pytest.warns(CacheWarning, match=r"vectors/ in .* older ragkit's vectors.*computed again"):
            assert main(["cache", "status"]) == 0  # the old packs are named, not read: there is no migration
        shown = capsys.readouterr().out
        assert f"private cache: {private}" in shown and "unit" in shown and "2 rows" in shown
        default_embedder().cache.close()
        assert main(["cache", "clear"]) == 0
        assert not (private / CACHE_FILE).exists() and "vectors.sqlite" in capsys.readouterr().out
    finally:
        default_embedder.cache_clear()


def test_a_private_cache_of_another_format_is_moved_aside_and_rebuilt_saying_so(tmp_path):
    VectorCache(tmp_path, STAMP, DIMS).put("unit", keys(2), unit_rows(2))
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("UPDATE meta SET value = 'ragkit-cache-0' WHERE name = 'format'")
    cache = VectorCache(tmp_path, STAMP, DIMS)
    with pytest.warns(CacheWarning, match="of another ragkit's format .*ragkit-cache-0.*moved aside.*started again"):
        assert cache.get("unit", keys(2)) == [None, None]
    assert {p.name.split(".damaged-")[0] for p in tmp_path.glob("*.damaged-*")} == {CACHE_FILE}


def test_a_shared_cache_of_another_format_is_refused_and_says_to_fill_it_again(shared, tmp_path):
    shared.chmod(0o755)
    (shared / CACHE_FILE).chmod(0o644)
    with sqlite3.connect(shared / CACHE_FILE) as db:
        db.execute("UPDATE meta SET value = 'ragkit-cache-0' WHERE name = 'format'")
    db.close()
    (shared / CACHE_FILE).chmod(0o444)
    shared.chmod(0o555)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=shared)
    with pytest.warns(CacheWarning, match=r"another format \(ragkit-cache-0.*warm --cache"):
        assert all(v is None for v in cache.get("unit", keys(3)))  # no row came through


# -- who may change a shared cache (issue 21): its owner and every folder above it, not its mode bits ------------

SPARE_UID, OTHER_UID = 4242, 4243
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user (os.chown)")


def give(path: Path, uid: int) -> None:
    """Make ``uid`` the owner of a folder (or file) and everything in it."""
    for p in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.chown(p, uid, uid, follow_symlinks=False)


def finished(folder: Path, seed: int = 0) -> Path:
    """A shared cache filled with three rows, finished and made read-only (mode a-w)."""
    filler = VectorCache(folder, STAMP, DIMS)
    filler.put("unit", keys(3), unit_rows(3, seed))
    filler.close()
    finish_shared(folder)
    (folder / CACHE_FILE).chmod(0o444)
    folder.chmod(0o555)
    return folder


@needs_root
def test_a_read_only_shared_cache_another_user_owns_is_refused(shared, tmp_path):
    """Mode a-w proves nothing: its owner can make it writable again, rewrite it and put the bits back."""
    give(shared, SPARE_UID)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=shared)
    with pytest.warns(CacheWarning, match=f"belongs to uid {SPARE_UID}.*chown -R root"):
        assert all(v is None for v in cache.get("unit", keys(3)))  # no row came through


@needs_root
def test_a_shared_database_linked_to_a_file_another_user_owns_is_refused(shared, tmp_path):
    """The attack of issue 21: vectors.sqlite a symlink to a student's read-only file with recomputed checksums."""
    forged = finished(tmp_path / "forged", seed=9)
    give(forged / CACHE_FILE, SPARE_UID)
    shared.chmod(0o755)
    (shared / CACHE_FILE).unlink()
    (shared / CACHE_FILE).symlink_to(forged / CACHE_FILE)
    shared.chmod(0o555)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=shared)
    with pytest.warns(CacheWarning, match=f"forged/{CACHE_FILE} belongs to uid {SPARE_UID}"):
        assert all(v is None for v in cache.get("unit", keys(3)))  # no row came through


@pytest.mark.parametrize("mode", [0o777, 0o1777], ids=["writable by all", "sticky, like /tmp"])
def test_a_folder_others_can_write_above_a_shared_cache_is_refused_unless_sticky_and_roots(tmp_path, mode):
    """Whoever can write a folder above can rename the cache away and put another in its place, except in a sticky
    folder of root's (like /tmp), where nobody may rename or replace what another owns."""
    if mode & 0o1000 and os.geteuid() != 0:
        pytest.skip("needs root: only a sticky folder owned by root passes")
    above = tmp_path / "open"
    above.mkdir()
    folder = finished(above / "shared")
    above.chmod(mode)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=folder)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = cache.get("unit", keys(3))
    above.chmod(0o755)
    if mode & 0o1000:
        assert not seen and np.array_equal(np.stack(got), unit_rows(3))
    else:
        assert all(v is None for v in got)  # no row came through
        assert [f"{above} is writable by its group or by everyone" in str(w.message) for w in seen] == [True]


def test_an_unfinished_shared_cache_is_never_written_and_says_how_to_finish_it(tmp_path):
    """Read as root, a WAL database opened mode=ro got -wal and -shm files written beside it; immutable writes none."""
    folder = tmp_path / "shared"
    filler = VectorCache(folder, STAMP, DIMS)
    filler.put("unit", keys(3), unit_rows(3))
    filler.close()  # still in WAL mode: `warm --cache` would have finished it
    (folder / CACHE_FILE).chmod(0o444)
    folder.chmod(0o555)
    before = sha(folder / CACHE_FILE)
    cache = VectorCache(tmp_path / "mine", STAMP, DIMS, shared=folder)
    with pytest.warns(CacheWarning, match=f"not finished.*`python -m ragkit warm --cache {folder}`"):
        assert all(v is None for v in cache.get("unit", keys(3)))  # no row came through
    cache.summary()
    cache.close()
    assert sorted(p.name for p in folder.iterdir()) == [CACHE_FILE] and sha(folder / CACHE_FILE) == before
    folder.chmod(0o755)


READ_SHARED = textwrap.dedent("""
    import sys, warnings
    from ragkit.plumbing.cache import VectorCache, text_key
    warnings.simplefilter("always")
    cache = VectorCache(sys.argv[2], "test-stamp-w256-d8", 8, shared=sys.argv[1])
    got = cache.get("unit", [text_key(f"text {i}") for i in range(3)])
    print("hits", sum(g is not None for g in got))
""")


def read_as(uid: int, shared: Path, base: Path) -> subprocess.CompletedProcess:
    """READ_SHARED run as ``uid`` (no groups), with a private cache of its own."""
    mine = base / f"mine-{uid}"
    mine.mkdir(exist_ok=True)
    os.chown(mine, uid, uid)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(mine))
    return subprocess.run(
        [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            sys.executable,
            "-c",
            READ_SHARED,
            str(shared),
            str(mine),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to read as another user")
def test_a_shared_cache_a_student_owns_serves_that_student_and_no_other():
    """The issue's attack: a student's cache, mode a-w, was accepted by every other student.

    "Nobody but root or the reader can change it" is the rule. The student who owns it may use it (only they could
    have poisoned it, and only for themselves; a teacher testing a fill as their own user is this case); any
    other student must refuse it, whatever its mode bits say. A class's shared cache is therefore root's.
    """
    base = Path(tempfile.mkdtemp(prefix="ragkit-owners-", dir="/tmp"))
    try:
        base.chmod(0o755)  # pytest's own tmp folder is root's alone: the readers could not even reach it
        shared = finished(base / "shared")
        give(shared, SPARE_UID)
        owner, other = read_as(SPARE_UID, shared, base), read_as(OTHER_UID, shared, base)
        assert owner.returncode == 0 and other.returncode == 0, owner.stderr + other.stderr
        assert "hits 3" in owner.stdout and "CacheWarning" not in owner.stderr, owner.stderr
        assert "hits 0" in other.stdout and f"belongs to uid {SPARE_UID}" in other.stderr, other.stdout + other.stderr
        roots = read_as(OTHER_UID, finished(base / "roots"), base)  # the class's cache: root's, read by a student
        assert "hits 3" in roots.stdout and "CacheWarning" not in roots.stderr, roots.stdout + roots.stderr
    finally:
        shutil.rmtree(base)
