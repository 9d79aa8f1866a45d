"""Approximate search: the generated collection, the exact top k in blocks (faiss's flat index as the oracle), recall
with ties, the index's memory against faiss's own serialization, and the trade-off measured over a small collection."""

import itertools
import subprocess
import sys

import faiss
import numpy as np
import pytest

from ragkit.approximate import (
    EF_SEARCH,
    SIZE_ENV,
    STUDENT_SIZE,
    Exact,
    _TopK,
    collection_size,
    exact_scan,
    generated_collection,
    hnsw_index,
    index_memory,
    measure_hnsw,
    recall,
    stored_vectors,
)
from ragkit.errors import InputError


def unit(rows: int, dim: int = 24, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_the_generated_collection_is_unit_float32_reproducible_and_as_large_as_asked():
    centres = unit(50)
    collection = generated_collection(centres, 1_000, block=300)
    assert len(collection) == 1_000
    blocks = list(collection)
    assert [len(b) for b in blocks] == [300, 300, 300, 100]
    x = np.vstack(blocks)
    assert x.dtype == np.float32 and x.shape == (1_000, 24)
    assert np.allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
    assert np.array_equal(x, np.vstack(list(generated_collection(centres, 1_000, block=300))))
    assert not np.array_equal(x, np.vstack(list(generated_collection(centres, 1_000, seed=7, block=300))))


def test_a_generated_vector_is_a_centre_plus_noise_that_grows_with_the_spread():
    centres = unit(50)
    (none,) = generated_collection(centres, 200, spread=0.0)
    assert (none @ centres.T).max(axis=1) == pytest.approx(np.ones(200), abs=1e-5)  # each is one of the centres
    closeness = [
        np.median((np.vstack(list(generated_collection(centres, 200, spread=s))) @ centres.T).max(axis=1))
        for s in (0.3, 1.0, 3.0)
    ]
    assert closeness[0] > closeness[1] > closeness[2]


def test_the_noise_follows_the_centres_own_directions():
    """Centres that vary along two axes only give noise along those two: nothing in the other 22."""
    rng = np.random.default_rng(1)
    centres = np.zeros((40, 24), dtype=np.float32)
    centres[:, 0] = 1.0
    centres[:, 1:3] = rng.standard_normal((40, 2)) * 0.2
    x = next(iter(generated_collection(centres, 500)))
    assert np.abs(x[:, 3:]).max() < 1e-6 and x[:, 1:3].std() > 0.05


@pytest.mark.parametrize("bad", [dict(n=0), dict(block=0), dict(spread=-1.0), dict(spread=float("nan"))])
def test_bad_arguments_to_the_generator_say_what_to_pass(bad):
    with pytest.raises(InputError, match="ask for one or more vectors"):
        generated_collection(unit(5), **({"n": 10} | bad))
    with pytest.raises(InputError, match="two or more vectors"):
        generated_collection(unit(1), 10)


def test_the_exact_top_k_in_blocks_is_faiss_flat_index_and_a_full_sort():
    x, q = unit(2_000), unit(30, seed=1)
    flat = faiss.IndexFlatIP(24)
    flat.add(x)
    scores, ids = flat.search(q, 20)
    for size in (2_000, 512, 7):
        top = _TopK(q, 20)  # what measure_hnsw keeps while the blocks pass
        for i in range(0, len(x), size):
            top.add(x[i : i + size])
        exact = top.result()
        assert np.array_equal(exact.ids, ids) and np.allclose(exact.scores, scores, atol=1e-5)
    assert np.array_equal(exact.ids, np.argsort(-(q @ x.T), axis=1)[:, :20])
    assert np.array_equal(exact_scan(x, q[3], 20), ids[3])


def test_recall_is_the_share_of_the_exact_top_k_found_and_a_tie_at_the_kth_place_counts():
    exact = Exact(np.array([[0, 1, 2, 3], [4, 5, 6, 7]]), np.array([[0.9, 0.8, 0.7, 0.6], [0.9, 0.8, 0.7, 0.6]]))
    assert recall(exact.ids, exact.scores, exact) == 1.0
    found = np.array([[0, 1, 8, 9], [4, 5, 6, 7]])
    assert recall(found, np.array([[0.9, 0.8, 0.5, 0.4], exact.scores[1]]), exact) == 6 / 8
    # 9 is not one of the exact four, but scores as the exact fourth does: equally right
    assert recall(found, np.array([[0.9, 0.8, 0.5, 0.6], exact.scores[1]]), exact) == 7 / 8
    assert (
        recall(
            np.array([[0, -1, -1, -1], [4, 5, 6, 7]]), np.array([[0.9, -3e38, -3e38, -3e38], exact.scores[1]]), exact
        )
        == 5 / 8
    )


def test_the_index_memory_is_faiss_serialized_index_less_its_header_and_the_vectors_are_the_ones_added():
    x = unit(3_000, dim=32)
    index = hnsw_index(32, m=8)
    index.add(x)
    memory = index_memory(index)
    assert memory.vectors == x.nbytes and memory.graph > 3_000 * 2 * 8 * 4  # at least the bottom layer's 2M links
    serialized = len(faiss.serialize_index(index))
    assert 0 <= serialized - memory.total < 1_000
    assert np.array_equal(stored_vectors(index), x)


def test_the_bottom_layer_holds_every_vector_with_2m_links_and_each_layer_above_m_as_08b_says():
    """08b's account of HNSW, held to faiss: at most 2M links a vector on the bottom layer, M above; every vector on
    the bottom layer, fewer on each layer above; no layer a complete graph."""
    x = unit(3_000, dim=32)
    index = hnsw_index(32, m=8)
    index.add(x)
    h = index.hnsw
    assert [h.nb_neighbors(level) for level in range(3)] == [16, 8, 8]
    levels = faiss.vector_to_array(h.levels)  # a vector's top layer, counted from 1
    on_layer = [int((levels > layer).sum()) for layer in range(int(levels.max()))]
    assert on_layer[0] == len(x) and all(a > b for a, b in itertools.pairwise(on_layer))
    neighbours = faiss.vector_to_array(h.neighbors).reshape(-1)
    offsets = faiss.vector_to_array(h.offsets)
    bottom = [neighbours[offsets[i] : offsets[i] + 16] for i in range(len(x))]
    assert max(int((links >= 0).sum()) for links in bottom) <= 16 < len(x) - 1  # sparse: far from every other vector


def test_an_index_whose_size_is_known_reserves_its_memory_once_and_holds_the_same_vectors():
    """measure_hnsw sizes the stored vectors' array before the first block (no regrowth): the arrays end as without."""
    from ragkit.approximate import _reserve

    x = unit(3_000, dim=32)
    reserved, grown = hnsw_index(32, m=8), hnsw_index(32, m=8)
    _reserve(reserved, len(x))
    assert faiss.downcast_index(reserved.storage).codes.size() == x.nbytes and reserved.ntotal == 0
    for i in range(0, 3_000, 700):
        reserved.add(x[i : i + 700])
        grown.add(x[i : i + 700])
        assert faiss.downcast_index(reserved.storage).codes.size() == reserved.ntotal * 32 * 4
    assert np.array_equal(stored_vectors(reserved), x) and index_memory(reserved) == index_memory(grown)


def test_the_trade_off_over_a_small_collection():
    x, q = np.vstack(list(generated_collection(unit(300, dim=32), 4_000))), unit(40, dim=32, seed=3)
    t = measure_hnsw(x, q, "small", ef_search=(512, 4, 64), threads=1)
    assert (t.vectors, t.dim, t.queries, t.k, t.build_threads) == (4_000, 32, 40, 20, 1)
    assert [s.ef_search for s in t.settings] == [4, 64, 512]
    assert t.at(512).recall >= 0.99 and t.at(4).recall < t.at(512).recall
    assert all(s.ms > 0 for s in t.settings) and t.exact_ms > 0 and t.build_seconds > 0
    assert t.memory.vectors == x.nbytes
    best = np.sort(q @ x.T, axis=1)[:, ::-1]
    assert t.nearest == pytest.approx(np.median(best[:, 0]), abs=1e-5)
    assert t.kth == pytest.approx(np.median(best[:, 19]), abs=1e-5) and t.kth < t.nearest
    assert t.cheapest(0.0) == t.settings[0] and t.cheapest(1.01) is None
    assert "4,000 vectors of 32" in str(t) and str(t).count("\n") == 3 + 3
    with pytest.raises(InputError, match="choose one of 4, 64, 512"):
        t.at(16)
    blocks = measure_hnsw(generated_collection(unit(300, dim=32), 4_000, block=1_000), q, ef_search=(512,), threads=1)
    assert blocks.vectors == 4_000 and blocks.at(512).recall >= 0.99


def test_measure_refuses_what_it_cannot_measure():
    with pytest.raises(InputError, match="same length"):
        measure_hnsw(unit(100, dim=24), unit(3, dim=32))
    with pytest.raises(InputError, match="at least k vectors"):
        measure_hnsw(unit(10), unit(3))
    with pytest.raises(InputError, match="one or more query vectors"):
        measure_hnsw(unit(100), np.zeros((0, 24), dtype=np.float32))
    with pytest.raises(InputError, match="one or more efSearch"):
        measure_hnsw(unit(100), unit(3), ef_search=())


def test_the_collection_size_comes_from_one_setting(monkeypatch):
    from ragkit.plumbing import memory

    monkeypatch.delenv(SIZE_ENV, raising=False)
    monkeypatch.setattr(memory, "available", lambda: 64 * 2**30)  # a machine with room: the test is not this one
    assert collection_size() == STUDENT_SIZE >= 200_000
    monkeypatch.setenv(SIZE_ENV, "20,000")
    assert collection_size() == 20_000
    for bad in ("many", "-5", "3"):
        monkeypatch.setenv(SIZE_ENV, bad)
        with pytest.raises(InputError, match=f"{SIZE_ENV} = '{bad}'"):
            collection_size()


def test_importing_faiss_writes_nothing_to_stderr():
    done = subprocess.run(
        [sys.executable, "-c", "import faiss, ragkit.approximate"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stderr == ""


@pytest.mark.slow  # the course's vectors
def test_over_the_course_chunks_the_graph_finds_the_exact_top_20_at_the_widest_search():
    import ragkit.teach.course

    course = ragkit.teach.course.load(progress=False)
    r = course.retriever("E")
    t = measure_hnsw(r.vectors, r.embed([q.text for q in course.queries]), "E", threads=1)
    assert t.vectors == len(r.chunks) and [s.ef_search for s in t.settings] == list(EF_SEARCH)
    assert t.at(max(EF_SEARCH)).recall == 1.0


def test_a_kernel_short_of_memory_gets_fewer_generated_vectors_never_an_out_of_memory_kill(monkeypatch):
    from ragkit import approximate
    from ragkit.plumbing import memory

    assert approximate.affordable(200_000, None) == 200_000
    assert approximate.affordable(200_000, 10 * 2**30) == 200_000  # 10 GiB free: the students' size
    room = approximate.affordable(200_000, 2**28)  # 256 MiB free: half of it for the index
    assert room == 2**27 // approximate.HELD_PER_VECTOR and room * approximate.HELD_PER_VECTOR <= 2**27
    assert approximate.affordable(200_000, 10 * 2**20) == approximate.SMALLEST  # never below the tests' size
    monkeypatch.delenv(approximate.SIZE_ENV, raising=False)
    monkeypatch.setattr(memory, "available", lambda: 2**28)
    assert approximate.collection_size() == room
    monkeypatch.setenv(approximate.SIZE_ENV, "300000")  # a size asked for is the size given
    assert approximate.collection_size() == 300_000
