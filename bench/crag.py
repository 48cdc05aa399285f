"""CRAG designs compared on the bundled question set (cragrag/data/crag_questions.jsonl: 12 answerable, 9 vocabulary-gap,
11 out-of-corpus questions over the bundled corpus), in one run:

- the two-threshold score gate (`Pipeline.answer`), offline: calibrated reranker score, glossary rewriter, extractive generator;
- the score gate with an OpenAI-compatible model: LLM rewriter and generator, served by the scripted server;
- the course's judge design (`JudgeCRAG`) with MAX_RETRIES 2, MAX_RETRIES 0 and the strict answer grader, on the scripted server.

The scripted server answers with a rule-based stand-in (`cragrag.testing.judge_replies.judge_responder`), not a language
model: the figures measure control flow (LLM calls, retries, refusals, latency of everything but the model), not judgement
quality. "est. s/q" adds --llm-seconds per LLM call (~2 s per vLLM call, measured for the production pipeline) to the
measured latency. Prints figures and ratios against the offline score gate measured in the same run; asserts nothing.
The measuring helpers (question set, one row per question, summary) are in bench/crag_designs.py, shared with the
course notebook.

    python bench/crag.py [--questions PATH] [--llm-seconds 2.0]
"""
import argparse, json, time
from cragrag.course.judge import JudgeCRAG
from cragrag.models.llm import OpenAICompatibleLLM
from cragrag.answering.pipeline import Pipeline
from cragrag.testing.judge_replies import judge_responder
from cragrag.testing.scripted import ScriptedLLMServer
from crag_designs import design_row, load_question_set, summarize_rows   # bench/ is on sys.path when run as a script

ap = argparse.ArgumentParser()
ap.add_argument("--questions", default=None, help="JSONL with question, kind, gold (default: the bundled set)")
ap.add_argument("--llm-seconds", type=float, default=2.0, help="assumed seconds per real LLM call for the estimate column")
ap.add_argument("--json", action="store_true", help="also print every row as JSON")
args = ap.parse_args()

qs = load_question_set(args.questions)
kinds = {k: sum(q["kind"] == k for q in qs) for k in ("answerable", "vocabulary_gap", "out_of_corpus")}
print(f"questions: {len(qs)} {kinds}")
t0 = time.perf_counter()
base = Pipeline(qdrant_path=":memory:", trace_enabled=False)
print(f"index: {base.index(progress=False)} ({time.perf_counter() - t0:.1f} s)")

with ScriptedLLMServer(responder=judge_responder) as srv:
    llm = OpenAICompatibleLLM(base_url=srv.url, model="scripted-judge", api_key="x", max_retries=0, timeout=30)
    with_llm = Pipeline(base.settings, store=base.store, llm="openai", llm_base_url=srv.url, llm_model="scripted-judge", llm_api_key="x")   # same store; only the LLM differs
    search = lambda q: base.retrieve(q).sources
    designs = {"score gate (offline)": base, "score gate + LLM": with_llm,
               "JudgeCRAG MAX_RETRIES=2": JudgeCRAG(search, llm, max_retries=2),
               "JudgeCRAG MAX_RETRIES=0": JudgeCRAG(search, llm, max_retries=0),
               "JudgeCRAG strict grader": JudgeCRAG(search, llm, max_retries=2, strict=True)}
    for d in designs.values(): design_row(d, qs[0])   # warm up (first search loads the models)
    results = {name: [design_row(d, q) for q in qs] for name, d in designs.items()}

summ = {name: summarize_rows(rows) for name, rows in results.items()}
ref = summ["score gate (offline)"]
print(f"\n{'design':26s} {'pass ans':>8s} {'pass gap':>8s} {'pass ooc':>8s} {'ref P':>6s} {'ref R':>6s} {'gold':>5s} "
      f"{'calls/q':>7s} {'calls ooc':>9s} {'retries':>7s} {'p50 ms':>7s} {'mean ms':>7s} {'est. s/q':>8s}")
for name, s in summ.items():
    est = s["latency_ms_mean"] / 1000 + s["llm_calls_mean"] * args.llm_seconds
    pr = s["pass_rate"]
    print(f"{name:26s} {pr.get('answerable', 0):8.2f} {pr.get('vocabulary_gap', 0):8.2f} {pr.get('out_of_corpus', 0):8.2f} "
          f"{s['refusal_precision'] or 0:6.2f} {s['refusal_recall'] or 0:6.2f} {s['answered_with_gold'] or 0:5.2f} {s['llm_calls_mean']:7.2f} "
          f"{s['llm_calls_out_of_corpus']:9.2f} {s['retries_mean']:7.2f} {s['latency_ms_p50']:7d} {s['latency_ms_mean']:7d} {est:8.2f}")
print("\nratios against the offline score gate (same run):")
for name, s in summ.items():
    if name == "score gate (offline)": continue
    calls = f"LLM calls {s['llm_calls_mean']:.2f} vs {ref['llm_calls_mean']:.2f}"
    print(f"  {name:26s} {calls:28s} latency ×{s['latency_ms_mean'] / max(ref['latency_ms_mean'], 1):.2f}  "
          f"refusal recall {s['refusal_recall']:.2f} vs {ref['refusal_recall']:.2f}")
print("\nper question (R = refused, reason, LLM calls):")
names = list(results)
print(f"{'kind':15s} " + " ".join(f"{n[:22]:>24s}" for n in names) + "  question")
for i, q in enumerate(qs):
    cells = []
    for n in names:
        r = results[n][i]
        cells.append(f"{('R ' + (r['reason'] or ''))[:18] if r['refused'] else 'answer' + ('' if r['gold_hit'] is None else (' ✓' if r['gold_hit'] else ' ✗'))} {r['llm_calls']:>2d}")
    print(f"{q['kind']:15s} " + " ".join(f"{c:>24s}" for c in cells) + f"  {q['question']}")
if args.json: print(json.dumps({"summary": summ, "rows": results}, ensure_ascii=False, indent=1))
