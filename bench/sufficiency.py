"""The sufficiency mode against the score gate, on the labelled sufficiency set, in one run. Prints figures; asserts nothing.

    python bench/sufficiency.py                 # the bundled questions, on the demo corpus
    python bench/sufficiency.py --shared        # also the questions on ../shared/corpus (revisions, fire-safety laws)
    python bench/sufficiency.py --scenarios dev # then the legal scenario questions beside them (bench/scenarios.py: dev, heldout or all)

For each question both modes answer through `Pipeline.answer` (offline generator, no LLM). The gate's verdict is
read from its outcome: answered → SUFFICIENT, refused → UNANSWERABLE (it has no other words). Reported per mode, with
95% bootstrap intervals: sufficiency precision and recall, false-sufficient rate, false-unanswerable rate, coverage
accuracy (the gate's coverage is 1 when it answers, 0 when not); for the sufficiency mode also the corrective success
rate (questions not SUFFICIENT after round 0 that the corrective rounds made SUFFICIENT or raised in coverage), new
evidence per corrective round, extra searches per question (beyond the first round), LLM calls per question, and
p50/p95 latency of both modes; then the confusion table and the design's refund example."""
import argparse, collections, sys, time
from pathlib import Path
import numpy as np
from cragrag.indexing.documents import demo_corpus_dir, load_demo_corpus, revisions_dir
from cragrag.answering.pipeline import Pipeline
from cragrag.evaluate.sufficiency_eval import gold_coverage, load_sufficiency_golden, sufficiency_report

ap = argparse.ArgumentParser()
ap.add_argument("--shared", action="store_true", help="also the shared-corpus questions (needs ../shared/corpus)")
ap.add_argument("--split", default=None, help="dev or heldout (default: both)")
ap.add_argument("--scenarios", default=None, help="also the scenario questions of this split (dev, heldout, all), over every current law")
ap.add_argument("--store", default=None, help="with --scenarios: an index folder to reuse (built once when empty)")
a = ap.parse_args()

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
def run(rows, paths, label):
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    t = time.perf_counter(); p.index(paths, progress=False); print(f"\n## {label}: {len(rows)} questions, {p.store.count()} chunks indexed in {time.perf_counter() - t:.0f} s")
    p.answer("보험계약은 언제 성립하나요?")          # warm
    preds, lat, extra = {"gate": [], "sufficiency": []}, {"gate": [], "sufficiency": []}, collections.Counter()
    conf, rounds_new, corrected, tried_corr, searches, llm = collections.Counter(), [], 0, 0, [], []
    for r in rows:
        for mode in ("gate", "sufficiency"):
            t = time.perf_counter(); res = p.answer(r["question"], answer_mode=mode); lat[mode].append((time.perf_counter() - t) * 1000)
            if mode == "gate":
                v = "UNANSWERABLE" if res.is_refusal else "SUFFICIENT"
                preds[mode].append({"id": r["id"], "verdict": v, "coverage": 0.0 if res.is_refusal else 1.0}); continue
            s = res.sufficiency; preds[mode].append({"id": r["id"], "verdict": s["verdict"], "coverage": s["coverage"]})
            conf[(r["verdict"], s["verdict"])] += 1
            searches.append(s["searches"])
    # the rounds' detail: the same loop run directly (deterministic), to read its round records
    from cragrag.decide.sufficiency.loop import Budget, run_sufficiency
    for r in rows:
        o = run_sufficiency(r["question"], lambda q, rt, k=None, f=None: p.search(q, rt, k, f, query_level=False), exists=lambda c: bool(p.store.retrieve([c])), laws=p.indexed_titles(),
                            budget=Budget(max_rounds=p.settings.sufficiency_max_rounds, max_searches=p.settings.sufficiency_max_searches),
                            top_k=p.settings.top_k)
        first = o.rounds[0]
        rounds_new += [x.new_evidence for x in o.rounds[1:]]
        extra["searches"] += o.searches - len(first.actions)
        if first.verdict != "SUFFICIENT" and len(o.rounds) > 1:
            tried_corr += 1
            corrected += o.verdict.verdict == "SUFFICIENT" or o.verdict.coverage > first.coverage
    for mode in ("gate", "sufficiency"):
        rep = sufficiency_report(rows, preds[mode])
        print(f"\n{mode}:")
        for k, e in rep.items(): print(f"  {k:<26} {e}")
        print(f"  latency p50 {np.percentile(lat[mode], 50):.0f} ms, p95 {np.percentile(lat[mode], 95):.0f} ms; LLM calls per question 0 (offline generator)")
    n = len(rows)
    print(f"\nsufficiency loop: corrective success {corrected}/{tried_corr} questions that went to corrective rounds; "
          f"new evidence per corrective round {np.mean(rounds_new) if rounds_new else 0:.1f} (n={len(rounds_new)} rounds); "
          f"extra searches per question {extra['searches'] / n:.2f}; searches per question {np.mean(searches):.2f}")
    print("confusion (gold → sufficiency mode):")
    for (g, v), k in sorted(conf.items()): print(f"  {g:<14} → {v:<14} {k}")
    return p

rows = load_sufficiency_golden(split=a.split, corpus="bundled")
p = run(rows, load_demo_corpus(), "bundled (the demo corpus, as the labels assume)")
q = next(r for r in load_sufficiency_golden() if r["id"] == "suf029")
res = p.answer(q["question"], answer_mode="sufficiency")
print("\nrefund example (demo corpus, no earlier revision):", res.sufficiency["verdict"], res.sufficiency["coverage"],
      [m["description"] for m in res.sufficiency["missing"]], "| gold missing:", [x["description"] for x in q["requirements"] if x["id"] in q["missing"]])
p.index([revisions_dir()], progress=False)
res = p.answer(q["question"], answer_mode="sufficiency")
print("refund example (the bundled excerpt of the 2020-12-08 revision added):", res.sufficiency["verdict"], res.sufficiency["coverage"],
      [m["description"] for m in res.sufficiency["missing"]])
if a.shared:
    if not SHARED.exists(): sys.exit(f"--shared: {SHARED} not found")
    srows = load_sufficiency_golden(split=a.split, corpus="shared")
    paths = [*load_demo_corpus(), SHARED / "revisions"] + sorted((SHARED / "legalize-kr").glob("*소방*")) + sorted((SHARED / "legalize-kr").glob("*화재*"))
    run(srows, paths, "shared")
if a.scenarios:   # the scenario set beside the one-sentence one: facts about 갑 and 을, 1-3 gold articles each, by number of gold articles
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scenarios
    sp = scenarios.open_pipeline(a.store)
    scenarios.report(scenarios.run(sp, scenarios.load_scenarios(None if a.scenarios == "all" else a.scenarios)), f"scenarios ({a.scenarios})")
