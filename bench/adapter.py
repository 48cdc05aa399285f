"""A query-side linear adapter learnt from the indexed documents alone (issue 27's "learn from the corpus itself"), measured
on real questions no weight was chosen on.

For each corpus the pairs come from the documents, never from a labelled question:
- **title / defined-term probes**: `cragrag.decide.probes.probe_questions` over every titled article (the question forms of
  the self-calibrating gate; none copies its article) → that article;
- **references**: the words that follow a resolved reference in an article ("제5조에 따른 소방안전관리자를 선임" → the
  words after "제5조", cut at the clause's end) → the article the reference reaches (`cragrag.indexing.refgraph`).
Targets are article vectors (the mean of the article's chunk vectors, unit length). Two fits of W (d × d, the query
vector becomes q W; ranking by cosine does not depend on its length):
- **ridge**: argmin ‖QW − P‖² + λ‖W − I‖², closed form;
- **contrastive**: softmax cross-entropy of each probe against every article of the corpus (temperature τ = 0.05) plus
  μ‖W − I‖², full-batch gradient descent (Adam, 150 steps).
λ and μ are chosen per corpus on the probes alone (5 folds grouped by article, probe R@5 over articles; the identity
stays when no value beats it there); the real
questions are read once, after the choice, for the report. Reported per corpus: dense alone (exact cosine over
chunks, the first 5 distinct articles) and `retrieve(top_k=5)` with the base and the adapted query vector, R@5 with
95 % bootstrap intervals, adapted minus base paired, per-question wins and losses; and the learning cost (seconds per
1k chunks: embedding the pairs' queries and fitting).

    python bench/adapter.py [--sets fire,bundled,laws] [--json OUT]

Sets: as bench/peers.py (fire dev over its 8 documents; bundled golden, heldout and dev, on the demo corpus; laws: the
gate benches' 180 answerable questions over their 16 documents). Asserts nothing."""
import argparse, json, random, sys, tempfile, time, zlib
from pathlib import Path
import numpy as np
from cragrag.answering.pipeline import Pipeline
from cragrag.core.config import load_settings
from cragrag.decide.probes import probe_questions
from cragrag.evaluate.eval import article_metrics, bootstrap_ci, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.models.embedding import make_embedder, text_key

root = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "bench"))
from answers import add_set_args, bench_cache, retrieval_sets  # noqa: E402
from corpus_pairs import ref_pairs  # noqa: E402
ap = argparse.ArgumentParser()
add_set_args(ap)
ap.add_argument("--max-refs", type=int, default=1500, help="reference pairs per corpus at most (sampled)")
ap.add_argument("--json")
args = ap.parse_args()

settings = load_settings(qdrant_path=":memory:", trace_enabled=False)
emb = make_embedder(settings)
cache, cache_file = bench_cache(emb)
qcache: dict[str, np.ndarray] = {}

def qvecs(qs) -> np.ndarray:
    todo = [q for q in dict.fromkeys(qs) if q not in qcache]
    for i in range(0, len(todo), 64):
        for q, v in zip(todo[i:i + 64], emb.embed_queries(todo[i:i + 64])): qcache[q] = np.asarray(v, dtype=np.float32)
    return np.stack([qcache[q] for q in qs])

def unit(x): return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)

# ---------------------------------------------------------------- fits

def fit_ridge(Q, P, lam):
    d = Q.shape[1]
    return np.linalg.solve(Q.T @ Q + lam * np.eye(d), Q.T @ P + lam * np.eye(d))

def fit_contrastive(Q, pos, A, mu, steps=150, lr=2e-4, tau=0.05):
    d = Q.shape[1]; W = np.eye(d, dtype=np.float64); m1 = np.zeros_like(W); m2 = np.zeros_like(W)
    Y = np.zeros((len(Q), len(A))); Y[np.arange(len(Q)), pos] = 1
    for t in range(1, steps + 1):
        S = (Q @ W) @ A.T / tau; S -= S.max(1, keepdims=True); E = np.exp(S); E /= E.sum(1, keepdims=True)
        G = Q.T @ ((E - Y) @ A) / tau / len(Q) + 2 * mu * (W - np.eye(d))
        m1 = 0.9 * m1 + 0.1 * G; m2 = 0.999 * m2 + 0.001 * G * G
        W -= lr * (m1 / (1 - 0.9 ** t)) / (np.sqrt(m2 / (1 - 0.999 ** t)) + 1e-8)
    return W

def fmt(res: dict) -> str: return "{" + ", ".join(f"{k}: {v:.3f}" for k, v in res.items()) + "}"

def probe_r5(Qte, pos_te, A, W) -> float:
    S = (Qte @ W) @ A.T
    top = np.argsort(-S, axis=1)[:, :5]
    return float(np.mean([p in row for p, row in zip(pos_te, top)]))

def choose(kind, Q, pos, A, P, groups, grid):
    "The regulariser with the best mean probe R@5 over 5 folds grouped by article (no real question read)."
    folds = np.array([zlib.crc32(repr(g).encode()) % 5 for g in groups])   # stable across runs (str hashes are salted per process)
    res = {}
    for r in grid:
        sc = []
        for f in range(5):
            tr, te = folds != f, folds == f
            W = fit_ridge(Q[tr], P[tr], r) if kind == "ridge" else fit_contrastive(Q[tr], pos[tr], A, r)
            sc.append(probe_r5(Q[te], pos[te], A, W))
        res[r] = float(np.mean(sc))
    base = float(np.mean([probe_r5(Q[folds == f], pos[folds == f], A, np.eye(Q.shape[1])) for f in range(5)]))
    best = max(res, key=res.get)
    return (best if res[best] > base else None), res, base   # None: no regulariser beats the identity on held-out probes

# ---------------------------------------------------------------- one corpus

def run_corpus(name, paths, sets):
    p = Pipeline(settings.model_copy(update={"qdrant_path": Path(tempfile.mkdtemp(prefix=f"adapter-{name}-")) / "store"}))
    chunks = p.chunk(p.load(paths))
    todo = list({text_key(t): t for t in (c.embed_text for c in chunks) if text_key(t) not in cache.vectors}.values())
    if todo: print(f"embedding {len(todo)} passages once ...", flush=True); cache.embed_passages(emb, todo, workers=1); cache.save(cache_file)
    index_chunks(p.store, chunks, p.embedder, p.sparse_encoder, cache=cache, progress=False)
    ctx = p.search_context()
    V = unit(np.stack([cache.vectors[text_key(c.embed_text)] for c in chunks]).astype(np.float64))
    ckeys = [(c.doc_id, c.article_id) for c in chunks]
    akeys = sorted({k for k in ckeys if k[1]}); aidx = {k: i for i, k in enumerate(akeys)}
    A = unit(np.stack([V[[i for i, k in enumerate(ckeys) if k == a]].mean(0) for a in akeys]))
    t0 = time.perf_counter(); rnd = random.Random(0)
    probes = [(x.question, x.source) for x in probe_questions(p.store, n_articles=10 ** 6) if x.answerable and x.source in aidx]
    refs = ref_pairs(chunks, rnd, args.max_refs)
    pairs = [(q, k) for q, k in probes + refs if k in aidx]
    Q = unit(qvecs([q for q, _ in pairs]).astype(np.float64)); t_embed = time.perf_counter() - t0
    pos = np.array([aidx[k] for _, k in pairs]); P = A[pos]; groups = [k for _, k in pairs]
    t0 = time.perf_counter()
    lam, lam_res, base_probe = choose("ridge", Q, pos, A, P, groups, (0.3, 1, 3, 10, 30, 100))
    mu, mu_res, _ = choose("contrastive", Q, pos, A, P, groups, (0.3, 3, 30))
    t_choose = time.perf_counter() - t0; t0 = time.perf_counter()
    eye = np.eye(Q.shape[1])
    Ws = {"ridge": eye if lam is None else fit_ridge(Q, P, lam), "contrastive": eye if mu is None else fit_contrastive(Q, pos, A, mu)}
    t_fit = time.perf_counter() - t0
    print(f"\n## {name}: {len(chunks)} chunks, {len(akeys)} articles; pairs {len(probes)} probes + {len(refs)} references")
    print(f"probe R@5 (5 folds by article): identity {base_probe:.3f}; ridge {fmt(lam_res)} → λ={lam}; contrastive {fmt(mu_res)} → μ={mu} (None: the identity, no regulariser beat it)")
    kn = len(chunks) / 1000
    print(f"learning cost: embed pairs {t_embed:.1f}s, choose {t_choose:.1f}s, final fits {t_fit:.1f}s → {(t_embed + t_fit) / kn:.1f} s per 1k chunks (+{t_choose / kn:.1f} for the choice)")
    base_qv = ctx.query_vectors
    def dense_top5(qv):
        order = np.argsort(-(V @ qv)); out = []
        for i in order:
            if ckeys[i] not in out: out.append(ckeys[i])
            if len(out) == 5: break
        return out
    out = {"chunks": len(chunks), "articles": len(akeys), "probes": len(probes), "refs": len(refs), "lambda": lam, "mu": mu,
           "probe_r5": {"identity": base_probe, "ridge": lam_res, "contrastive": mu_res},
           "cost_s": {"embed": t_embed, "choose": t_choose, "fit": t_fit}, "sets": {}}
    for set_name, qs in sets.items():
        rows = {}
        for variant in ("base", "ridge", "contrastive"):
            W = None if variant == "base" else Ws[variant]
            f = (lambda q: base_qv(q)) if W is None else (lambda q, W=W: (unit(np.asarray(base_qv(q), dtype=np.float64) @ W)).astype(np.float32))
            ctx.query_vectors = f
            rd = [article_metrics(dense_top5(np.asarray(f(q.question), dtype=np.float64)), q.articles)["R@5"] for q in qs]
            rc = [article_metrics([(s.metadata.get("doc_id"), s.metadata.get("article_id")) for s in p.retrieve(q.question, top_k=5).sources
                                   if not s.metadata.get("sibling_of")], q.articles)["R@5"] for q in qs]
            rows[variant] = {"dense": rd, "retrieve": rc}
        ctx.query_vectors = base_qv
        print(f"\n### {set_name} ({len(qs)} questions): R@5 [95 % CI]; adapted − base paired, wins / losses")
        print("| variant | dense alone | Δ dense | retrieve(top_k=5) | Δ retrieve | wins / losses (retrieve) |\n|---|---:|---:|---:|---:|---:|")
        res = {}
        for v, r in rows.items():
            e1, e2 = bootstrap_ci(r["dense"]), bootstrap_ci(r["retrieve"])
            d1, d2 = paired_diff_ci(rows["base"]["dense"], r["dense"]), paired_diff_ci(rows["base"]["retrieve"], r["retrieve"])
            w = [q.id for q, a, b in zip(qs, rows["base"]["retrieve"], r["retrieve"]) if b > a]
            l = [q.id for q, a, b in zip(qs, rows["base"]["retrieve"], r["retrieve"]) if b < a]
            c = lambda e: f"{e.mean:.3f} [{e.lo:.2f}, {e.hi:.2f}]"; dc = lambda e: f"{e.mean:+.3f} [{e.lo:+.2f}, {e.hi:+.2f}]"
            print(f"| {v} | {c(e1)} | {dc(d1) if v != 'base' else ''} | {c(e2)} | {dc(d2) if v != 'base' else ''} | {f'{len(w)} / {len(l)}' if v != 'base' else ''} |")
            res[v] = {"dense": r["dense"], "retrieve": r["retrieve"], "wins": w, "losses": l,
                      "d_dense": [d1.mean, d1.lo, d1.hi], "d_retrieve": [d2.mean, d2.lo, d2.hi]}
        out["sets"][set_name] = {"ids": [q.id for q in qs], **res}
    return out

results = {}
for name, paths, sets in retrieval_sets(args): results[name] = run_corpus(name, paths, sets)
if args.json: Path(args.json).write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str)); print(f"wrote {args.json}")
