"""How wide must the rewrite band be? The gap between the pass line and the first search's best score of every question a
rewrite rescued (refused at once, a fit with no band would have lost it). Prints the gaps' quantiles and the band that keeps
90 % of the rescues; asserts nothing.

    python bench/rewrite_band.py            # the demo corpus (bundled golden set + vocabulary-gap questions) and the fire dev set

The chosen band is `MIN_REWRITE_BAND` in cragrag.decide.calibration (see the Design section)."""
import json, sys
from pathlib import Path
import numpy as np
from cragrag.answering.pipeline import Pipeline
from cragrag.evaluate.eval import bundled_golden, load_golden

ROOT = Path(__file__).resolve().parents[1]
FIRE = ROOT.parent / "shared" / "eval" / "fire_qna_dev.jsonl"

def rescues(p, questions) -> list[tuple[float, float]]:
    "(pass line, first search's best score) of each question answered after at least one rewrite."
    out = []
    for q in questions:
        res = p.answer(q, explain=True)
        at = (res.explain or {}).get("attempts") or []
        if not res.is_refusal and len(at) > 1 and at[0]["best_score"] is not None:
            out.append((res.explain["gate"]["pass_threshold"], at[0]["best_score"]))
    return out

if __name__ == "__main__":
    sets = []
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    vocab = [json.loads(l)["question"] for l in (ROOT / "cragrag" / "data" / "vocab_gap_questions.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    sets.append(("demo corpus", p, [q.question for q in bundled_golden() if q.answerable] + vocab))
    if FIRE.is_file():
        rows = [json.loads(l) for l in FIRE.read_text(encoding="utf-8").splitlines() if l.strip()]
        f = Pipeline(qdrant_path=":memory:", trace_enabled=False)
        f.index(sorted({str(ROOT.parent / "shared" / "corpus" / g["doc"]) for r in rows for g in r["gold"]}), progress=False)   # the gate fitted as `cragrag index` fits it
        sets.append(("fire dev", f, [q.question for q in load_golden(FIRE) if q.answerable]))
    gaps = []
    for name, pipe, qs in sets:
        r = rescues(pipe, qs)
        g = [t - s for t, s in r]; gaps += g
        print(f"{name}: {len(qs)} answerable questions, {len(r)} rescued by a rewrite; gap pass − first best: "
              + (f"median {np.median(g):.3f}, 90th percentile {np.quantile(g, 0.9):.3f}, max {max(g):.3f}" if g else "–"))
    if gaps: print(f"all: {len(gaps)} rescues; a band of {np.quantile(gaps, 0.9):.3f} keeps 90 % of them, {max(gaps):.3f} all")
