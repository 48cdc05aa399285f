"""Retrieval candidates of issue 12 against today's full stage, paired per question, with a 5-fold view. Prints figures;
asserts nothing. Each candidate changes only how the reranker's candidates are gathered; the calibrated reranker then
orders them as `retrieve()` does.

    python bench/retrieval_candidates.py [--candidates doc-prf,glossary,doc-route] [--no-whole]

- `doc-prf`: pseudo-relevance feedback's dense search restricted to the documents of the first-pass top `prf_docs` hits;
- `glossary`: the question and its glossary rewrite (cragrag.decide.gate.apply_glossary) searched both, fused by RRF (k=60);
- `doc-route`: BM25 of the question over each document's title, chapter headings and article titles; the top two
  documents get an extra document-filtered search, fused with the normal one by RRF (k=60);
- `title-field`: BM25 over each chunk's article title and chapter alone (a second collection with the same ids),
  its top 30 fused with today's candidates by RRF (k=60), weighted `--title-weight` (1.0 and 0.25 measured);
- `score-order`: the calibrated reranker ordering candidates by its probability instead of keeping retrieval order;
- `law-route`: the documents whose title the question names (in full, as a tail, or abbreviated: 소방시설법, 보험업법,
  화재예방법 시행령; the level must agree) get an extra document-filtered search, fused by RRF (k=60).
- `ref-hop`: the legal reference graph (cragrag.indexing.refgraph.ReferenceGraph), one hop. Every chunk's references (제N조,
  「법」 제N조, 법/영/규칙 제N조 with the document's own 이하 "법" definitions, 같은 법, lists, 준용, 대통령령으로 정하는, 별표 N)
  become edges between indexed articles; the articles one hop from the top five (both directions, so a delegating act
  reaches the decree article that cites it) are candidates. The one closest to the question (dense) takes the fourth
  article slot when it is closer than the article there. (RRF of the hop list, weights 1.0-0.25, was measured first:
  R@5 -0.16 to -0.36 on the fire documents, because neighbours of the top hits jump above them.) Also prints how many
  missed gold articles lie one hop from the top five.

Sets: the fire dev set (../shared/eval) on the fire documents and on the whole shared corpus, and the bundled golden
set's dev and heldout splits on the bundled corpus. Passage vectors come from bench/.cache (run bench/retrieval.py once
first: it embeds and caches the whole corpus) and the bundled cache."""
import argparse, json, math, re
from collections import Counter, defaultdict
from pathlib import Path
import numpy as np
from cragrag.core.config import Settings
from cragrag.text.glossary import apply_glossary, load_glossary
from cragrag.indexing.documents import chunk_document, load_demo_corpus, load_documents
from cragrag.models.embedding import EmbeddingCache, bundled_cache, make_embedder
from cragrag.evaluate.eval import article_metrics, bundled_golden, load_golden, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.text.korean import GENERIC_LAW_WORDS, find_article_refs, law_level, law_match, law_norm
from cragrag.indexing.refgraph import ReferenceGraph
from cragrag.retrieval.rerank import CalibratedReranker
from cragrag.retrieval.routing import classify_query
from cragrag.core.schema import SearchStrategy
from cragrag.retrieval.search import SearchContext, to_hits, rerank, search_candidates, search_rrf_only
from cragrag.models.sparse import KiwiBM25
from cragrag.text.morphology import analyze
from cragrag.indexing.store import StorePoint, open_store

root = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--candidates", default="doc-prf,glossary,doc-route,law-route")
ap.add_argument("--title-weight", type=float, default=0.25, help="RRF weight of the title list (title-field)")
ap.add_argument("--append", action="store_true", help="fusion candidates append their new candidates instead of reordering (RRF)")
ap.add_argument("--whole", action=argparse.BooleanOptionalAction, default=True)
args = ap.parse_args()
s = Settings(qdrant_path=":memory:"); emb = make_embedder(s)
cache = EmbeddingCache.load(root / "bench" / ".cache" / f"embeddings-{emb.name.replace(':', '_').replace('/', '_')}.npz", emb.name)
reranker = CalibratedReranker(embedder_name=emb.name)
PROFILES, TITLES, NAMED, GLOSSARY, TITLE_FIELD, GRAPH = {}, {}, [], load_glossary(), {}, {}

def build(name, docs, c):
    "Index `docs` in memory; the search context, with the documents' topic profiles for doc-route."
    chunks = [x for d in docs for x in chunk_document(d, s.chunk_max_chars)]
    st, bm = open_store(s, name), KiwiBM25()
    index_chunks(st, chunks, emb, bm, cache=c, progress=False)
    ctx = SearchContext(st, emb, bm, s)
    TITLES[id(ctx)] = {d.doc_id: law_norm(d.title) for d in docs}
    if "title-field" in args.candidates:   # a second collection: the same ids, BM25 over article title + chapter only
        heads = [" ".join(filter(None, [c.chapter, c.article_title])) or c.doc_title for c in chunks]
        st2, bm2 = open_store(s, name + "-titles"), KiwiBM25().fit(heads)
        st2.create(emb.dim, "content-bm25", True, {})
        dense = c.embed_passages(emb, [ch.embed_text for ch in chunks])
        st2.upsert([StorePoint(ch.chunk_id, d, v, {}) for ch, d, v in zip(chunks, dense, bm2.encode_documents(heads))])
        TITLE_FIELD[id(ctx)] = (st2, bm2)
    GRAPH[id(ctx)] = ReferenceGraph.build(chunks)
    PROFILES[id(ctx)] = {d.doc_id: Counter(analyze(" ".join([d.title] + sorted({a.chapter or "" for a in d.articles}) + [a.title or "" for a in d.articles])))
                         for d in docs}
    return ctx

def one_hop(ctx, top):
    "Articles one reference away from `top` (cragrag.indexing.refgraph, both directions), in order, excluding `top` and articles not indexed."
    g, out = GRAPH[id(ctx)], []
    for a in top:
        for x in g.neighbours(a):
            if x not in top and x not in out and x in g.chunks: out.append(x)
    return out

def ref_hop(ctx, query, strategy, slot=3):
    base = search_candidates(ctx, query, strategy); qv = ctx.query_vec
    top = arts(base)[:5]
    nb = one_hop(ctx, top)
    if len(top) <= slot or not nb: return base
    hop = [h for h in to_hits(ctx.store.retrieve([i for a in nb for i in GRAPH[id(ctx)].chunks[a]], with_vectors=True)) if h.dense is not None]
    if not hop: return base
    best = max(hop, key=lambda h: float(np.dot(h.dense, qv)))
    there = [h for h in base if (h.payload.get("doc_id"), h.payload.get("article_id")) == top[slot] and h.dense is not None]
    if there and float(np.dot(best.dense, qv)) <= max(float(np.dot(h.dense, qv)) for h in there): return base
    at = next(i for i, h in enumerate(base) if (h.payload.get("doc_id"), h.payload.get("article_id")) == top[slot])
    out = base[:at] + [best] + [h for h in base[at:] if h.id != best.id]
    for i, h in enumerate(out): h.rank = i + 1
    return out

def reachable(name, ctx, qs):
    "How many gold articles missed by the top five lie one hop from it."
    miss = near = 0
    for q in (q for q in qs if q.answerable and q.gold):
        top = arts(rerank(ctx, q.question, search_candidates(ctx, q.question, classify_query(q.question).strategy), reranker))[:5]
        if set(q.articles) & set(top): continue
        miss += 1; near += bool(set(q.articles) & set(one_hop(ctx, top)))
    print(f"  {name}: {GRAPH[id(ctx)].n_edges} reference edges; {near} of {miss} missed gold articles lie one hop from the top five")

def fuse(ctx, query, *lists, weights=None):
    """RRF (k=60, optionally weighted per list) of candidate lists, ranks renumbered; the query vector left as the question's.
    With --append: the first list unchanged, then the other lists' new candidates (the reranker's rank feature kept)."""
    ctx.query_vec = ctx.query_vectors(query)
    if args.append:
        out, seen = list(lists[0]), {h.id for h in lists[0]}
        for lst in lists[1:]:
            for h in lst:
                if h.id not in seen: seen.add(h.id); out.append(h)
        for i, h in enumerate(out): h.rank = i + 1
        return out
    score, byid = {}, {}
    for lst, w in zip(lists, weights or [1.0] * len(lists)):
        for i, h in enumerate(lst): score[h.id] = score.get(h.id, 0) + w / (61 + i); byid.setdefault(h.id, h)
    out = sorted(byid.values(), key=lambda h: -score[h.id])
    for i, h in enumerate(out): h.rank = i + 1
    ctx.query_vec = ctx.query_vectors(query)
    return out

def doc_prf(ctx, query, strategy):
    hits, m = search_rrf_only(ctx, query, strategy), s.prf_docs
    fb = [h.dense for h in hits[:m] if h.dense is not None]
    if not fb or SearchStrategy(strategy) == SearchStrategy.BM25_HEAVY: return hits
    v = ctx.query_vec + s.prf_weight * np.mean(fb, axis=0); v = v / (np.linalg.norm(v) or 1)
    found = ctx.store.dense(v, s.top_k * s.search_prefetch_multiplier, {"doc_id": sorted({h.payload.get("doc_id") for h in hits[:m]})}, with_vectors=True)
    out = to_hits(found, {h.id: h for h in hits}); seen = {h.id for h in out}
    out += [h for h in hits if h.id not in seen]
    for i, h in enumerate(out): h.rank = i + 1
    return out

def glossary(ctx, query, strategy):
    base = search_candidates(ctx, query, strategy)
    alt, found = apply_glossary(query, GLOSSARY)
    if not found or alt == query: return base
    return fuse(ctx, query, base, search_candidates(ctx, alt, classify_query(alt).strategy))

def doc_scores(query, prof) -> dict:
    "BM25 (k1 1.2, b 0.75) of the question's terms over the document profiles."
    q, n = set(analyze(query)), len(prof)
    df, avg = Counter(t for c in prof.values() for t in c), np.mean([sum(c.values()) for c in prof.values()])
    out = {}
    for d, c in prof.items():
        L = sum(c.values())
        out[d] = sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * c[t] * 2.2 / (c[t] + 1.2 * (0.25 + 0.75 * L / avg)) for t in q if t in c)
    return out

def doc_route(ctx, query, strategy):
    base, prof = search_candidates(ctx, query, strategy), PROFILES[id(ctx)]
    sc = doc_scores(query, prof); best = sorted(sc, key=lambda d: -sc[d])[:2]
    if len(prof) < 2 or sc[best[0]] <= 0: return base
    return fuse(ctx, query, base, search_candidates(ctx, query, strategy, filters={"doc_id": best}))

_LAW_WORD = re.compile(r"[가-힣]+?(?:법률|시행령|시행규칙|법|규정|기준)")

def named_docs(ctx, query) -> list[str]:
    "Documents whose title the question names (full, a tail, or an abbreviation: 소방시설법, 화재예방법 시행령, 보험업법)."
    words = [w for w in _LAW_WORD.findall(query) if w not in GENERIC_LAW_WORDS]
    titles = TITLES[id(ctx)]
    def names(w, t): return law_level(w) == law_level(t) and (w == t or t.endswith(w) or (len(w) >= 4 and law_match(w, t)))
    return sorted({d for w in words for d, t in titles.items() if names(w, t)})

def law_route(ctx, query, strategy):
    base, docs = search_candidates(ctx, query, strategy), named_docs(ctx, query)
    if not docs: return base
    NAMED.append(query)
    return fuse(ctx, query, base, search_candidates(ctx, query, strategy, filters={"doc_id": docs}))

def title_field(ctx, query, strategy):
    "Today's candidates fused (RRF k=60) with the top 30 chunks by BM25 over their article title and chapter alone."
    base = search_candidates(ctx, query, strategy)
    st2, bm2 = TITLE_FIELD[id(ctx)]
    qv = bm2.encode_query(query)
    if not qv.indices: return base
    ids = [h.id for h in st2.sparse(qv, 30)]
    have = {h.id: h for h in base}
    new = {h.id: h for h in to_hits(ctx.store.retrieve([i for i in ids if i not in have], with_vectors=True))}
    title_hits = [have.get(i) or new.get(i) for i in ids if (have.get(i) or new.get(i)) is not None]
    return fuse(ctx, query, base, title_hits, weights=(1.0, args.title_weight))

class _ByScore:
    "The calibrated reranker, ordering by its own probability (today it keeps the retrieval order)."
    name = "calibrated-by-score"
    def score(self, query, hits, query_vec=None): return reranker.score(query, hits, query_vec)

def score_order(ctx, query, strategy):
    return rerank(ctx, query, search_candidates(ctx, query, strategy), _ByScore())

CANDIDATES = {"ref-hop": ref_hop, "score-order": score_order, "title-field": title_field, "doc-prf": doc_prf, "glossary": glossary, "doc-route": doc_route, "law-route": law_route}

def arts(hits):
    out = []
    for h in hits:
        k = (h.payload.get("doc_id"), h.payload.get("article_id"))
        if k not in out: out.append(k)
    return out

def compare(name, ctx, qs, cand):
    "Today vs `cand` on the answerable questions: R@5 and MRR, paired CI, per-fold differences, wins and losses."
    now, new = [], []
    for q in (q for q in qs if q.answerable and q.gold):
        st = classify_query(q.question).strategy
        now.append(article_metrics(arts(rerank(ctx, q.question, search_candidates(ctx, q.question, st), reranker)), q.articles))
        new.append(article_metrics(arts(rerank(ctx, q.question, CANDIDATES[cand](ctx, q.question, st), reranker)), q.articles))
    for m in ("R@5", "MRR"):
        a, b = np.array([x[m] for x in now]), np.array([x[m] for x in new]); folds = np.arange(len(a)) % 5
        fd = " ".join(f"{b[folds == f].mean() - a[folds == f].mean():+.3f}" for f in range(5))
        print(f"  {name:16s} {m:4s} today {a.mean():.3f}  {cand} {b.mean():.3f}  Δ {paired_diff_ci(a, b)}  folds {fd}  "
              f"wins {int((b > a).sum())} losses {int((b < a).sum())}", flush=True)

fire_file = root.parent / "shared" / "eval" / "fire_qna_dev.jsonl"
fire_qs = load_golden(fire_file)
fire_docs = load_documents(sorted({root.parent / "shared" / "corpus" / g["doc"] for l in open(fire_file, encoding="utf-8") for g in json.loads(l)["gold"]}))
sets = [("fire-only", build("fire", fire_docs, cache), fire_qs)]
if args.whole: sets.append(("whole corpus", build("whole", load_documents([root.parent / "shared" / "corpus"]), cache), fire_qs))
bundled = build("bundled", load_demo_corpus(), bundled_cache(emb.name))
sets += [("bundled dev", bundled, bundled_golden("dev")), ("bundled heldout", bundled, bundled_golden("heldout"))]
for cand in args.candidates.split(","):
    print(f"\n{cand}: {CANDIDATES[cand].__name__} vs today's full stage (paired; 95% bootstrap CI of the difference)")
    for name, ctx, qs in sets:
        NAMED.clear(); compare(name, ctx, qs, cand)
        if cand == "ref-hop": reachable(name, ctx, qs)
        if cand == "law-route": print(f"  {name}: {len(NAMED)} questions name a document")
