"""Which statistic of the probe scores should set the gate's pass line: chosen under leave-one-corpus-out
cross-validation on the corpora measured before, then checked on corpora whose questions were written before any rule
was tried on them (issue 26).

    python bench/probe_rules.py --gate old.json --gate fresh.json --scores probes.json    # scores every probe (≈ 20 min), then reports
    python bench/probe_rules.py --gate old.json --gate fresh.json --report probes.json    # the report of a saved run, nothing re-run

`--gate` files are saved `bench/gate_corpora.py --json` runs: the real questions' best scores per corpus (answerable,
out-of-corpus, near-domain), read, not re-run. For each corpus this indexes the documents again and scores every probe
`cragrag.decide.probes.probe_questions` makes (answerable: title and defined-term templates; unanswerable: the everyday
pool and each absent concept in every form). A rule maps those probe scores to a pass line; it is judged on the real
questions of its corpus by answerable passed at once minus out-of-corpus passed (both as shares), and by the two shares.
Rules with one number are fitted on the other corpora of the development pool and judged on the one left out; the
fresh corpora (`FRESH`) are only reported, never fitted on."""
import argparse, json, sys, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
DEV = ["labor_privacy", "motor", "civil_health", "fire", "fire-35"]   # measured before: rules are chosen on these
FRESH = ["commercial", "fire_codes"]                                  # bench/data/gate_fresh.jsonl: only reported

def score_probes(groups, out_path: Path) -> dict:
    from gate_corpora import group_corpus
    from cragrag.answering.pipeline import Pipeline
    from cragrag.decide.gate import top_score
    from cragrag.decide.probes import probe_questions
    out = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {}
    for g in groups:
        if g in out: continue
        paths = group_corpus(g)[0]
        p = Pipeline(qdrant_path=":memory:", trace_enabled=False); t = time.perf_counter(); p.index(paths, progress=False)
        out[g] = [{"q": x.question, "answerable": x.answerable, "kind": x.kind, "concept": x.concept,
                   "score": top_score(p.retrieve(x.question).sources) or 0.0} for x in probe_questions(p.store)]
        print(f"## {g}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
        out_path.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return out

def negatives(rows):
    "Negative scores as `Pipeline.fit_gate` reads them (`negative_scores`): everyday one by one, near concepts by their mean over forms."
    from cragrag.decide.probes import Probe, negative_scores
    neg = [r for r in rows if not r["answerable"]]
    return negative_scores([Probe(r["q"], False, r["kind"], concept=r["concept"]) for r in neg], [r["score"] for r in neg])

def positives(rows): return [r["score"] for r in rows if r["answerable"]]

# rule name -> (fn(rows, theta) -> line, grid of theta or None)
RULES = {
    "max, one form by place (before)": (lambda rows, th: max([r["score"] for r in rows if not r["answerable"] and not r["concept"]] +
                                                              [v for v in _positional(rows)]), None),
    "max, concept mean over forms (candidate)": (lambda rows, th: max(negatives(rows)), None),
    "k-th largest negative (concept mean)": (lambda rows, th: sorted(negatives(rows))[-int(th)], [1, 2, 3, 4, 5]),
    "max of negatives below q-quantile of answerable probes": (
        lambda rows, th: max([s for s in negatives(rows) if s < np.quantile(positives(rows), th)] or [0.0]), [0.05, 0.1, 0.2, 0.3, 0.5]),
    "max, clipped to [floor, 0.5]": (lambda rows, th: max(th, max(negatives(rows))), [0.05, 0.08, 0.1, 0.12, 0.15, 0.2]),
    "max of negatives below q-quantile, floor 0.1": (
        lambda rows, th: max(0.1, max([s for s in negatives(rows) if s < np.quantile(positives(rows), th)] or [0.0])), [0.05, 0.1, 0.2, 0.3, 0.5]),
    "fixed line": (lambda rows, th: th, [0.1, 0.15, 0.2, 0.25, 0.3]),
}

def _positional(rows):
    "The score of each concept in the one form `probe_questions` gave it before (its place among the absent concepts)."
    by = {}
    for r in rows:
        if r["concept"]: by.setdefault(r["concept"], []).append(r["score"])
    return [forms[i % len(forms)] for i, forms in enumerate(by.values())]

def judge(line, real):
    t = min(0.5, line + 1e-4)
    ans = [r["on"] for r in real if r["kind"] == "answerable"]; ooc = [r["on"] for r in real if r["kind"] in ("ooc", "near_ooc")]
    a, o = sum(x >= t for x in ans), sum(x >= t for x in ooc)
    return t, a, len(ans), o, len(ooc)

def report(scores: dict, gate: list[dict]) -> None:
    real = {g: [r for r in gate if r["group"] == g] for g in scores}
    for name, (fn, grid) in RULES.items():
        print(f"\n## {name}")
        chosen = {}
        for g in DEV + FRESH + ["insurance"]:
            if g not in scores or not real.get(g): continue
            if grid is None: th = None
            else:   # fitted on the development corpora other than g (every one for the fresh and bundled corpora)
                pool = [d for d in DEV if d != g and d in scores]
                def util(th): 
                    rs = [judge(fn(scores[d], th), real[d]) for d in pool]
                    return np.mean([a / n - o / m for _, a, n, o, m in rs])
                th = max(grid, key=util)
            t, a, n, o, m = judge(fn(scores[g], th), real[g]); chosen[g] = (a, n, o, m)
            tag = "fresh" if g in FRESH else "bundled" if g == "insurance" else "dev (held out)"
            print(f"   {g:14s} {tag:15s} θ={th}  pass ≥ {t:.3f}: answerable {a}/{n} = {a / n:.2f}, out-of-corpus {o}/{m} = {o / m:.2f}")
        for part, gs in (("dev pooled", DEV), ("fresh pooled", FRESH)):
            rs = [chosen[g] for g in gs if g in chosen]
            if rs:
                a, n, o, m = (sum(x[i] for x in rs) for i in range(4))
                print(f"   {part:30s} answerable {a}/{n} = {a / n:.3f}, out-of-corpus {o}/{m} = {o / m:.3f}; min per corpus: "
                      f"answerable {min(x[0] / x[1] for x in rs):.2f}, ooc refused {min(1 - x[2] / x[3] for x in rs):.2f}")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gate", action="append", required=True, help="saved bench/gate_corpora.py --json runs (repeatable)")
    ap.add_argument("--report", help="a saved run of this script: report it, run nothing")
    ap.add_argument("--scores", default="probe_rules.json", help="where to save (and resume) the probe scores of a new run")
    ap.add_argument("--groups", default=",".join(["insurance"] + DEV + FRESH))
    args = ap.parse_args(argv)
    scores = (json.loads(Path(args.report).read_text(encoding="utf-8")) if args.report
              else score_probes(args.groups.split(","), Path(args.scores)))
    report(scores, [r for f in args.gate for r in json.loads(Path(f).read_text(encoding="utf-8"))])
    return 0

if __name__ == "__main__": sys.exit(main())
