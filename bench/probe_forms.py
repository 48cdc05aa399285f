"""How much the probe-fitted pass line depends on the question form each near-domain concept happens to get.

    python bench/probe_forms.py --gate gate.json                       # scores every concept in every form (≈ 10 min), then reports
    python bench/probe_forms.py --gate gate.json --report forms.json   # the report of a saved run, nothing re-run

`gate.json` is a saved `bench/gate_corpora.py --json` run: the real questions' best scores per corpus (answerable,
out-of-corpus, near-domain), read, not re-run. For each corpus this indexes the documents again, asks every near-domain
concept of the bundled pool in each of the four question forms (`cragrag.decide.probes.FORMS`) and reports the pass
line each statistic of the negative probes gives, and what that line passes of the real questions:
- current: each concept asked in one form, chosen by its place among the concepts the index does not mention (what
  `probe_questions` did before each concept was asked in every form), the line just above the best negative;
- the maximum over all forms, and the per-concept median, mean (what `Pipeline.fit_gate` reads now,
  `cragrag.decide.probes.negative_scores`) and minimum over forms;
- the spread of the current rule's line when each concept's form is drawn at random (500 draws).
Nothing here is fitted: it shows how much of the line is the form's luck."""
import argparse, json, random, sys, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

def score_forms(out_path: Path) -> dict:
    from gate_corpora import GROUPS, group_corpus
    from cragrag.answering.pipeline import Pipeline
    from cragrag.decide.gate import top_score
    from cragrag.decide.probes import FORMS, ask, indexed_articles, negative_pool, absent_concepts
    out = {}
    for group in [*GROUPS, "fire-35"]:
        paths = group_corpus(group)[0]
        p = Pipeline(qdrant_path=":memory:", trace_enabled=False); t = time.perf_counter(); p.index(paths, progress=False)
        arts, pool = indexed_articles(p.store), negative_pool()
        near = absent_concepts(pool["concepts"], (txt for _, txt in arts.values()))
        sc = lambda q: top_score(p.retrieve(q).sources) or 0.0
        out[group] = {"everyday": [sc(q) for q in pool["everyday"]], "near": {c: [sc(ask(c, f)) for f in FORMS] for c in near},
                      "positional": {c: i % len(FORMS) for i, c in enumerate(near)}}
        print(f"## {group}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
        out_path.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return out

def lines(rec: dict) -> dict[str, float]:
    "The best negative under each statistic (the pass line sits just above it)."
    ev, near = rec["everyday"], rec["near"]
    return {"current (one form, by place)": max(ev + [near[c][rec["positional"][c]] for c in near]),
            "max over all forms": max(ev + [s for v in near.values() for s in v]),
            "per-concept median": max(ev + [float(np.median(v)) for v in near.values()]),
            "per-concept mean": max(ev + [float(np.mean(v)) for v in near.values()]),
            "per-concept min": max(ev + [min(v) for v in near.values()])}

def report(forms: dict, gate: list[dict]) -> None:
    pooled = {}
    for g, rec in forms.items():
        real = [r for r in gate if r["group"] == g]
        if not real: continue
        rnd = random.Random(0)
        sims = [max(rec["everyday"] + [v[rnd.randrange(len(v))] for v in rec["near"].values()]) for _ in range(500)]
        print(f"## {g}: line fitted in the gate run {real[0]['fit_pass']:.3f}; with a random form per concept, 5–95 % "
              f"{np.percentile(sims, 5):.3f}–{np.percentile(sims, 95):.3f}")
        ans = [r["on"] for r in real if r["kind"] == "answerable"]
        ooc = [r["on"] for r in real if r["kind"] in ("ooc", "near_ooc")]
        for name, s in lines(rec).items():
            t = min(0.5, s + 1e-4); a, o = sum(x >= t for x in ans), sum(x >= t for x in ooc)
            if g != "insurance": pooled.setdefault(name, []).append((a, len(ans), o, len(ooc)))
            print(f"   {name:30s} pass ≥ {t:.3f}: answerable {a}/{len(ans)}, out-of-corpus {o}/{len(ooc)}")
    print("\npooled over the corpora other than the bundled one:")
    for name, rs in pooled.items():
        a, n, o, m = (sum(x[i] for x in rs) for i in range(4))
        print(f"   {name:30s} answerable passed {a}/{n} = {a / n:.3f}; out-of-corpus passed {o}/{m} = {o / m:.3f}")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gate", required=True, help="a saved bench/gate_corpora.py --json run")
    ap.add_argument("--report", help="a saved run of this script: report it, run nothing")
    ap.add_argument("--json", default="probe_forms.json", help="where to save the scores of a new run")
    args = ap.parse_args(argv)
    forms = json.loads(Path(args.report).read_text(encoding="utf-8")) if args.report else score_forms(Path(args.json))
    report(forms, json.loads(Path(args.gate).read_text(encoding="utf-8")))
    return 0

if __name__ == "__main__": sys.exit(main())
