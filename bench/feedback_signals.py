"""Can the index itself say whether pseudo-relevance feedback helps it? (issue 27: choose per corpus from what the
documents teach, never from the real questions). Prints figures; asserts nothing.

For each corpus, the same search is run twice over a 30-candidate pool: the fused Qdrant RRF list alone
(`cragrag.retrieval.search.search_rrf_only`) and the list the reranker sees, refined by feedback
(`search_candidates`), each read as its first distinct articles. Three kinds of questions are asked:
- **probes**: the gate's answerable probe questions of every titled article (`cragrag.decide.probes.probe_questions`);
- **references**: the words after a resolved reference → the article it reaches (`bench/corpus_pairs.py`, 600 sampled);
- **real**: the corpus's labelled questions, read for the report only, also by question length in characters.
A signal that can choose feedback per corpus must move the way the real questions move on every corpus.

    python bench/feedback_signals.py [--sets fire,bundled,laws]

Sets as bench/adapter.py (fire dev over the 8 documents its gold cites; the bundled golden set's answerable questions,
held-out and dev, on the demo corpus; the 180 answerable questions of bench/data/gate_fresh2-5.jsonl over their 16
documents indexed together)."""
import argparse, random, sys, tempfile
from pathlib import Path
import numpy as np
from cragrag.answering.pipeline import Pipeline
from cragrag.core.config import load_settings
from cragrag.decide.probes import probe_questions
from cragrag.evaluate.eval import article_metrics, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.models.embedding import make_embedder
from cragrag.retrieval.routing import classify_query
from cragrag.retrieval.search import search_candidates, search_rrf_only

root = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "bench"))
from answers import add_set_args, bench_cache, retrieval_sets  # noqa: E402
from corpus_pairs import ref_pairs  # noqa: E402

ap = argparse.ArgumentParser()
add_set_args(ap)
ap.add_argument("--pool", type=int, default=30)
args = ap.parse_args()

settings = load_settings(qdrant_path=":memory:", trace_enabled=False)
emb = make_embedder(settings)
cache, cache_file = bench_cache(emb)

def articles(hits, k=10) -> list[tuple]:
    out = []
    for h in hits:
        if h.key not in out: out.append(h.key)
        if len(out) == k: break
    return out

def measure(ctx, router, items) -> dict:
    "Per question, article metrics of the fused list and of the feedback list."
    rows = {"rrf": [], "feedback": []}
    for q, gold in items:
        st = classify_query(q, router).strategy
        rows["rrf"].append(article_metrics(articles(search_rrf_only(ctx, q, st, args.pool)), gold))
        rows["feedback"].append(article_metrics(articles(search_candidates(ctx, q, st, args.pool)), gold))
    return rows

def line(label, n, rows):
    d = {m: paired_diff_ci([r[m] for r in rows["rrf"]], [r[m] for r in rows["feedback"]]) for m in ("R@1", "R@5", "MRR")}
    mean = lambda k, m: np.mean([r[m] for r in rows[k]])
    print(f"| {label} | {n} | {mean('rrf', 'R@5'):.3f} / {mean('rrf', 'MRR'):.3f} | {mean('feedback', 'R@5'):.3f} / {mean('feedback', 'MRR'):.3f} | "
          + " | ".join(f"{e.mean:+.3f} [{e.lo:+.2f}, {e.hi:+.2f}]" for e in d.values()) + " |")

print("| corpus: questions | n | fused RRF R@5 / MRR | feedback R@5 / MRR | Δ R@1 | Δ R@5 | Δ MRR |\n|---|---:|---|---|---|---|---|")
for name, paths, sets in retrieval_sets(args):
    qs = [q for v in sets.values() for q in v]
    p = Pipeline(settings.model_copy(update={"qdrant_path": Path(tempfile.mkdtemp(prefix=f"fb-{name}-")) / "store"}))
    chunks = p.chunk(p.load(paths))
    index_chunks(p.store, chunks, p.embedder, p.sparse_encoder, cache=cache, progress=False)
    ctx, router = p.search_context(), p.router()
    probes = [(x.question, {x.source}) for x in probe_questions(p.store, n_articles=10 ** 6) if x.answerable]
    refs = [(q, {t}) for q, t in ref_pairs(chunks, random.Random(0), 600)]
    real = [(q.question, q.articles) for q in qs]
    for label, items in (("probes", probes), ("references", refs), ("real", real)): line(f"{name}: {label}", len(items), measure(ctx, router, items))
    rr = measure(ctx, router, real)
    for lo, hi in ((0, 40), (40, 80), (80, 10 ** 6)):
        keep = [i for i, (q, _) in enumerate(real) if lo <= len(q) < hi]
        if keep: line(f"{name}: real, {lo}–{hi if hi < 10 ** 6 else ''} chars", len(keep), {k: [v[i] for i in keep] for k, v in rr.items()})
