"""Keyword-search statistics are tenant-local: nothing another tenant indexes moves a tenant's BM25 scores or ranks.

Tenants share one collection. BM25's IDF (N and n_t) is asked of Qdrant over the tenant's own points (an IDF corpus,
`TenantStore.idf_corpus`), and each tenant's document weights use its own avgdl (`tenant_encoder`). Each test
reproduces the finding on real indexes of the bundled corpus: an attacker tenant floods the collection with its
probe words and the victim's scores and rankings must not move; before the fix they did (the collection-wide view
below still shows it). Untenanted search must be exactly what it was."""
import math
from collections import Counter
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace
import pytest
import cragrag.indexing.store as store_mod
from cragrag.answering.pipeline import Pipeline
from cragrag.indexing.build import TENANT_AVGDL
from cragrag.indexing.store import StoreError
from cragrag.indexing.tenancy import TenantStore
from cragrag.models.sparse import bm25_idf

CORPUS = Path(str(files("cragrag") / "corpus"))
VICTIM = [CORPUS / "legalize-kr" / "보험사기방지특별법_법률.md", CORPUS / "regulate-kr" / "원자력손해배상보상계약_약관_고시.md"]
QUERIES = ["보험사기를 저지르면 어떤 처벌을 받나요?", "원자력 손해 배상 보상계약의 보상금", "보험회사가 수사기관에 통보해야 하는 경우",
           "보험사기방지 특별법 제8조", "보험금 지급 기준", "보험사기 처벌"]
PROBE_WORDS = "보험사기 처벌 수사기관 통보 원자력 손해 배상 보상금 보험회사 보험금 지급 기준"

def probe_file(folder: Path, n: int = 60) -> Path:
    "The attacker's document: every article repeats the probe words."
    f = folder / "probe.md"
    f.write_text("# 탐침 문서\n\n" + "\n".join(f"제{i}조(탐침) {PROBE_WORDS} {PROBE_WORDS}." for i in range(1, n + 1)), encoding="utf-8")
    return f

def pipeline(tmp: Path, where: str, name: str = "s") -> Pipeline:
    return Pipeline(qdrant_path=tmp / name if where == "edge" else ":memory:", trace_enabled=False)

def snapshot(view) -> dict:
    "What the tenant sees: BM25 scores and order, the fused ranking, and the final reranked sources."
    enc, st = view.sparse_encoder, view.store
    out = {}
    for q in QUERIES:
        v, s = view.embedder.embed_queries([q])[0], enc.encode_query(q)
        out[q] = {"bm25": [(h.id, h.score) for h in st.sparse(s, 20)],
                  "hybrid": [(h.id, h.score) for h in st.hybrid(v, s, 60, 60, 20, 60)],
                  "retrieve": [(x.chunk_id, x.rerank_score or 0.0) for x in view.retrieve(q, top_k=10).sources]}
    return out

# Engines order points with exactly equal BM25 scores by their internal layout (Edge: even two builds of the same
# documents can differ; local mode: another tenant's points shift its arrays), and RRF follows that order. So fused
# lists are compared within one collection, before and after the attacker writes, on Edge; across two collections,
# and in local mode, the BM25 lists (tie-broken by id) and the stored weights are compared exactly.
FUSED = {"edge": ("bm25", "hybrid", "retrieve"), ":memory:": ("bm25",)}

def assert_same(a: dict, b: dict, keys=("bm25", "hybrid", "retrieve"), rel: float = 1e-6):
    "Identical ranks; scores equal within `rel` (not float equality across machines)."
    for q in QUERIES:
        for k in keys:
            assert [i for i, _ in a[q][k]] == [i for i, _ in b[q][k]], f"{k} ranking moved for {q!r}"
            for (_, x), (_, y) in zip(a[q][k], b[q][k]): assert math.isclose(x, y, rel_tol=rel, abs_tol=1e-12), (q, k, x, y)

def wide_scores(p: Pipeline, tenant: str) -> dict:
    "The tenant's BM25 scores under the collection-wide IDF: what every tenant got before the fix."
    enc, inner = p.sparse_encoder, p.store
    return {q: dict((h.id, h.score) for h in inner.sparse(enc.encode_query(q), 20, {"tenant": tenant})) for q in QUERIES}

@pytest.mark.parametrize("where", ["edge", ":memory:"])
def test_another_tenants_documents_never_move_a_tenants_scores(tmp_path, where):
    p = pipeline(tmp_path, where)
    victim, attacker = p.for_tenant("team-b"), p.for_tenant("team-a")
    victim.index(VICTIM, progress=False)
    before, wide_before = snapshot(victim), wide_scores(p, "team-b")
    attacker.index([probe_file(tmp_path), *VICTIM], progress=False)       # the probe words, many times over
    assert_same(before, snapshot(victim), FUSED[where])
    wide_after = wide_scores(p, "team-b")                                  # the old, collection-wide view does move
    shift = max(abs(wide_after[q][i] - s) / s for q in QUERIES for i, s in wide_before[q].items() if i in wide_after[q] and s)
    assert shift > 0.1, shift
    attacker.index([], progress=False)                                     # nothing changes when the attacker re-runs
    p.close()

@pytest.mark.parametrize("where", ["edge", ":memory:"])
def test_a_tenants_weights_do_not_depend_on_who_indexed_first(tmp_path, where):
    "avgdl is the tenant's own: the attacker indexing first (a different average length) changes nothing."
    first = pipeline(tmp_path, where, "first")
    first.for_tenant("team-a").index([probe_file(tmp_path, 200)], progress=False)
    shared = first.for_tenant("team-b"); shared.index(VICTIM, progress=False)
    alone = pipeline(tmp_path, where, "alone").for_tenant("team-b"); alone.index(VICTIM, progress=False)
    assert_same(snapshot(alone), snapshot(shared), ("bm25",))
    ids = [i for i, _ in alone.store.scroll(fields=[])]
    weights = lambda view: {h.id: (h.sparse.indices, h.sparse.values) for h in view.store.retrieve(ids, with_vectors=True)}
    assert weights(alone) == weights(shared)                               # the same BM25 weights, whoever came first
    ta, tb = (first.store.record()[TENANT_AVGDL][t] for t in ("team-a", "team-b"))
    assert ta != tb and first.store.record()["avgdl"] is None and first.sparse_encoder.avgdl is None
    first.close()

def test_a_tenants_scores_are_bm25_over_its_own_points(tmp_path):
    "By hand: IDF from the tenant's N and n_t only (Qdrant's formula, `bm25_idf`), whatever else the collection holds."
    p = pipeline(tmp_path, ":memory:")
    victim = p.for_tenant("team-b"); victim.index(VICTIM, progress=False)
    p.for_tenant("team-a").index([probe_file(tmp_path)], progress=False)
    own = victim.store.inner.retrieve([i for i, _ in victim.store.scroll(fields=[])], with_vectors=True)
    df = Counter(t for h in own for t in h.sparse.indices)
    for q in QUERIES:
        s = p.sparse_encoder.encode_query(q)
        for h in victim.store.sparse(s, 10, with_vectors=True):
            w = dict(zip(h.sparse.indices, h.sparse.values))
            assert math.isclose(h.score, sum(bm25_idf(df[t], len(own)) * w.get(t, 0.0) for t in s.indices), rel_tol=1e-6)
    p.close()

@pytest.mark.parametrize("where", ["edge", ":memory:"])
def test_untenanted_search_is_what_it_was(tmp_path, where, monkeypatch):
    "No tenant: no IDF corpus is ever sent (the request of before), the IDF is the collection's, avgdl the collection's."
    p = pipeline(tmp_path, where)
    p.index([*VICTIM, probe_file(tmp_path)], progress=False)
    sent = []
    real = type(p.store)._idf_params
    monkeypatch.setattr(type(p.store), "_idf_params", lambda self, corpus: sent.append(corpus) or real(self, corpus))
    for q in QUERIES: p.retrieve(q, top_k=5)
    assert sent and set(map(repr, sent)) == {"None"}
    rec = p.store.record()
    assert rec["avgdl"] and TENANT_AVGDL not in rec
    pts = p.store.retrieve([i for i, _ in p.store.scroll(fields=[])], with_vectors=True)
    df = Counter(t for h in pts for t in h.sparse.indices)
    for q in QUERIES[:3]:
        s = p.sparse_encoder.encode_query(q)
        for h in p.store.sparse(s, 5, with_vectors=True):
            w = dict(zip(h.sparse.indices, h.sparse.values))
            assert math.isclose(h.score, sum(bm25_idf(df[t], len(pts)) * w.get(t, 0.0) for t in s.indices), rel_tol=1e-5)
    p.close()

def test_a_tenant_cannot_ask_for_another_corpus(tmp_path):
    p = pipeline(tmp_path, ":memory:")
    b = p.for_tenant("team-b"); b.index(VICTIM[:1], progress=False)
    v, s = b.embedder.embed_queries(["보험사기"])[0], b.sparse_encoder.encode_query("보험사기")
    with pytest.raises(TypeError): b.store.hybrid(v, s, 10, 10, 5, 60, idf_corpus=None)
    reqs = [dict(dense=v, sparse=s, dense_limit=10, sparse_limit=10, limit=5, rrf_k=60, idf_corpus={"tenant": "team-a"})]
    assert [h.id for h in b.store.hybrid_batch(reqs)[0]] == [h.id for h in b.store.hybrid(v, s, 10, 10, 5, 60)]
    p.close()

def test_an_old_server_is_refused_not_silently_global(tmp_path, monkeypatch):
    "A Qdrant server before 1.19 would ignore the IDF corpus: the first tenant search says so; untenanted search goes on."
    p = pipeline(tmp_path, ":memory:")
    p.for_tenant("team-b").index(VICTIM[:1], progress=False)
    st = p.store
    monkeypatch.setattr(store_mod, "is_local_client", lambda client: False)   # as if this client talked to a server ...
    monkeypatch.setattr(st.client, "info", lambda: SimpleNamespace(version="1.18.2"))   # ... that runs 1.18
    v, s = p.embedder.embed_queries(["보험사기"])[0], p.sparse_encoder.encode_query("보험사기")
    assert st.hybrid(v, s, 10, 10, 5, 60)                                  # no corpus: no question asked
    with pytest.raises(StoreError, match=r"needs Qdrant >= 1.19: upgrade the server"):
        TenantStore(st, "team-b").hybrid(v, s, 10, 10, 5, 60)
    monkeypatch.setattr(st.client, "info", lambda: SimpleNamespace(version="1.19.0"))
    assert TenantStore(st, "team-b").hybrid(v, s, 10, 10, 5, 60)
    p.close()

def test_an_index_of_before_keeps_a_tenants_weights_consistent(tmp_path):
    "A tenant indexed when avgdl was the collection's keeps that value for its new chunks (recorded as its own)."
    p = pipeline(tmp_path, "edge")
    b = p.for_tenant("team-b"); b.index(VICTIM[:1], progress=False)
    rec = p.store.record(); old = rec[TENANT_AVGDL]["team-b"]
    p.store.write_record({**{k: v for k, v in rec.items() if k != TENANT_AVGDL}, "avgdl": old})   # the record as before the fix
    b.index(VICTIM, progress=False)                                        # a new document for the same tenant
    assert p.store.record()[TENANT_AVGDL] == {"team-b": old}
    p.close()
