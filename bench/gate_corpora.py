"""The CRAG gate's first reading on corpora its coefficients were never fitted on: with and without the offline
reranker's query-level adjustment (`rerank_query_level`), how many answerable questions pass at once, how many are
refused at once, and how many out-of-corpus questions pass.

    python bench/gate_corpora.py                      # all groups (≈ 10 min: each group is indexed once)
    python bench/gate_corpora.py --groups labor_privacy,fire --json /tmp/gate.json
    python bench/gate_corpora.py --report /tmp/gate.json          # the report of a saved run, nothing re-run

Questions (none used to fit anything, except the bundled golden dev split, reported separately as "fit"):
- answerable / absent: the value questions of bench/data/answer_slots_{dev,heldout}.jsonl of each group, plus the
  bundled golden held-out answerable questions for the insurance group;
- out-of-corpus: the bundled golden out-of-corpus questions (held-out split for insurance, all for the other groups,
  minus those a group's laws do answer), and bench/data/gate_near_ooc.jsonl: near-domain questions written for each
  group before any of this was fitted (another law's topic in the group's own vocabulary);
- fire-35: the shared fire dev set (101 citizens' questions) over the 35 laws and standards its gold articles cite;
- commercial, fire_codes (`--groups commercial,fire_codes`): bench/data/gate_fresh.jsonl, 상법 alone and four fire
  고시 alone, questions written before the per-concept probe line was tried on them;
- nuclear_terms, fraud_act, seismic_hydrant: bench/data/gate_fresh2.jsonl, 원자력손해배상보상계약 약관 alone, 보험사기방지특별법
  alone, 내진설계 기준 + NFPC 102, questions written before near-domain negatives were made from the corpus itself;
- motor_decree, fire_decree, apartment_code, privacy_act: bench/data/gate_fresh3.jsonl, one document each (자배법 시행령,
  화재예방법 시행령, NFPC 608, 개인정보 보호법), questions written before the rules of its change were run on them.
- sprinkler_code, fire_facility_rule, fire_prevention_act, health_insurance_act: bench/data/gate_fresh4.jsonl, one
  document each, held out for the value reader;
- fire_facility_decree, motor_act, labor_act, insurance_table1: bench/data/gate_fresh5.jsonl, one document each
  (소방시설법 시행령, 자동차손해배상 보장법, 근로기준법, 보험업감독규정 별표 1), held out;
- fire_facility_act, insurance_business_act, civil_act, hydrant_code: bench/data/gate_fresh6.jsonl, one document each
  (소방시설법, 보험업법, 민법, NFPC 102), held out (read on landed code, totals only).
- supervision_reg, supervision_tables, labor_privacy_health, fire_prevention_pair: bench/data/gate_fresh7.jsonl (보험업감독규정
  alone; its 별표 14 and 15 together; 근로기준법 + 개인정보 보호법 + 국민건강보험법 in one index; 화재예방법 and its decree),
  written by a helper who read only those documents, with the value each answerable question asks (`value`), held out
  for the next gate change.

The gate reads the best rerank score of the first search (no rewrite): pass ≥ crag_score_threshold, refuse <
crag_abort_threshold. Each group also reports the line `Pipeline.fit_gate` fits on probes made from its index (no
labels; what `cragrag index` records for a user's documents, or the defaults where the fit is not recorded) and what that line passes, its cost in seconds per 1,000
chunks beside the cost of indexing them, and the free rescue below the abort line (the glossary's one rewrite, which must
pass on its own), and, below the fitted pass line, the offline rewrite the answer path tries (the glossary over the group's
index: what it passes of answerable and of out-of-corpus questions). A question framed by a law the index does not hold
(`Router.other_laws`) is refused by the gate at any score, and counted so in the fitted-line figures. Shares come with 95 %
bootstrap intervals."""
import argparse, json, sys, time
from pathlib import Path
import numpy as np
from cragrag.answering.pipeline import Pipeline
from cragrag.decide.calibration import auc
from cragrag.decide.gate import GlossaryRewriter, top_score
from cragrag.evaluate.eval import bootstrap_ci, bundled_golden
from cragrag.indexing.documents import load_demo_corpus

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "bench"))
from answers import GROUPS  # noqa: E402

OOC_ANSWERED = {  # golden out-of-corpus questions (about insurance) that a group's own laws do answer
    "labor_privacy": ["해고예고수당", "주휴수당", "퇴직연금", "퇴직금"],
    "motor": ["의무보험", "대인배상", "사고부담금", "교통사고 합의금", "과실비율"],
    "civil_health": ["민법상", "본인부담상한제", "지역가입자", "의료급여", "상속세"],
    "fire": ["화재배상책임보험"],
}

def questions(group: str) -> list[tuple[str, str]]:
    "(kind, question) of a group: answerable, absent, ooc, near_ooc, and for insurance fit_answerable / fit_ooc."
    out = []
    for split in ("dev", "heldout"):
        for l in open(ROOT / "bench" / "data" / f"answer_slots_{split}.jsonl", encoding="utf-8"):
            r = json.loads(l)
            if r["group"] == group: out.append(("answerable" if r["answerable"] else "absent", r["question"]))
    gold = bundled_golden()
    ooc = [g for g in gold if g.category == "out_of_corpus"]
    if group == "insurance":
        out += [("answerable", g.question) for g in gold if g.answerable and g.split == "heldout"]
        out += [("ooc", g.question) for g in ooc if g.split == "heldout"]
        out += [("fit_answerable", g.question) for g in gold if g.answerable and g.split == "dev"]
        out += [("fit_ooc", g.question) for g in ooc if g.split == "dev"]
    else:
        out += [("ooc", g.question) for g in ooc if not any(w in g.question for w in OOC_ANSWERED.get(group, []))]
    out += [("near_ooc", r["question"]) for r in map(json.loads, open(ROOT / "bench" / "data" / "gate_near_ooc.jsonl", encoding="utf-8"))
            if r["group"] == group]
    return out

FRESH = [ROOT / "bench" / "data" / "gate_fresh.jsonl",    # groups written after the probe line's first version, before its next change
         ROOT / "bench" / "data" / "gate_fresh2.jsonl",   # written before near-domain negatives were made from the corpus itself
         ROOT / "bench" / "data" / "gate_fresh3.jsonl",   # written before law_not_indexed and the weak-probe rule were run on them
         ROOT / "bench" / "data" / "gate_fresh4.jsonl",   # held out for stop 47's value reader (run once on it)
         ROOT / "bench" / "data" / "gate_fresh5.jsonl",   # held out: run once on what stop 47 landed, before any change is tried
         ROOT / "bench" / "data" / "gate_fresh6.jsonl",   # held out for issue 26 (landed code read three times, totals only: stops 49 and 52)
         ROOT / "bench" / "data" / "gate_fresh7.jsonl"]   # held out for the next gate change: written at stop 52, nothing run on it

def fresh_rows() -> list[dict]:
    "The rows of the fresh gate sets, their out-of-corpus kind spelled as this bench's (ooc)."
    rows = [json.loads(l) for f in FRESH for l in open(f, encoding="utf-8")]
    return [{**r, "kind": "ooc" if r["kind"] == "out_of_corpus" else r["kind"]} for r in rows]

def fresh_values() -> dict[tuple[str, str], str]:
    "The value each answerable fresh question asks, as the document writes it, by (group, question): the sets that carry one (`value`)."
    return {(r["group"], r["question"]): r["value"] for r in fresh_rows() if r.get("value")}

def fresh(group: str) -> tuple[list[Path], list[tuple[str, str]]]:
    "The documents and (kind, question) of a fresh group: its answerable questions' gold documents."
    rows = [r for r in fresh_rows() if r["group"] == group]
    docs = sorted({g["doc"] for r in rows for g in r["gold"]})
    return [SHARED / "corpus" / d for d in docs], [(r["kind"], r["question"]) for r in rows]

FRESH_GROUPS = list(dict.fromkeys(r["group"] for r in fresh_rows()))

def fire35() -> tuple[list[Path], list[tuple[str, str]]]:
    rows = [json.loads(l) for l in open(SHARED / "eval" / "fire_qna_dev.jsonl", encoding="utf-8")]
    docs = sorted({g["doc"] for r in rows for g in r["gold"]})
    qs = [("answerable", r["question"]) for r in rows] + [("ooc", g.question) for g in bundled_golden() if g.category == "out_of_corpus"]
    return [SHARED / "corpus" / d for d in docs], qs

def group_corpus(group: str) -> tuple[list, list[tuple[str, str]]]:
    "The documents a group indexes and its (kind, question) pairs: fire-35, a fresh group, the bundled demo corpus or shared laws."
    if group == "fire-35": return fire35()
    if group in FRESH_GROUPS: return fresh(group)
    return (load_demo_corpus() if GROUPS[group] is None else [SHARED / "corpus" / "legalize-kr" / f"{n}.md" for n in GROUPS[group]]), questions(group)

def framed_elsewhere(p: Pipeline, q: str) -> bool:
    "Whether the gate refuses `q` at any score: framed by a law the index does not hold (`Router.other_laws`; an older cragrag: never)."
    return bool(getattr(p.router().classify(q), "other_laws", ()))

def passes(x: dict, line: float) -> bool:
    "Whether the gate passes row `x` at once at `line` (with the query-level adjustment)."
    return x["on"] >= line and not x.get("other_law")

def best_scores(p: Pipeline, qs, on: bool) -> list[float]:
    p.reranker.query_level = on
    return [top_score(p.retrieve(q).sources) or 0.0 for _, q in qs]

GLOSSARY = GlossaryRewriter()

def rescue_score(p: Pipeline, q: str, first: float, abort: float = 0.1) -> float | None:
    "Below the abort line: the best score of the glossary's one free rewrite (`free_rescue`); None when not below or no rewrite."
    if first >= abort or not (nq := GLOSSARY.rewrite(q)): return None
    return top_score(p.retrieve(nq).sources) or 0.0

def rewrite_score(p: Pipeline, q: str, first: float, line: float) -> float | None:
    "Below the fitted pass line: the best score of the offline rewrite the answer path tries (the glossary over this index, as\n    `Pipeline.services` gives it; one rewrite, in the band or as the free rescue); None when not below or no rewrite."
    g = GLOSSARY.over(p.index_texts) if hasattr(GLOSSARY, "over") else GLOSSARY   # an older cragrag: the glossary alone
    if first >= line or not (nq := g.rewrite(q)): return None
    return top_score(p.retrieve(nq).sources) or 0.0

def report(rows: list[dict]) -> None:
    s = Pipeline(qdrant_path=":memory:").settings; hi, lo = s.crag_score_threshold, s.crag_abort_threshold
    print(f"gate: pass ≥ {hi}, refuse < {lo}; each cell: without → with the query-level adjustment [95% interval of the latter]")
    def cell(xs, f):
        a, b = bootstrap_ci([float(f(x["off"])) for x in xs]), bootstrap_ci([float(f(x["on"])) for x in xs])
        return f"{a.mean:.2f} → {b.mean:.2f} [{b.lo:.2f}, {b.hi:.2f}]"
    groups = list(dict.fromkeys(r["group"] for r in rows))
    for g in groups + (["all but insurance"] if len(groups) > 1 else []):
        sel = [r for r in rows if r["group"] == g or (g == "all but insurance" and r["group"] != "insurance")]
        pos = [r for r in sel if r["kind"] == "answerable"]; neg = [r for r in sel if r["kind"] in ("ooc", "near_ooc")]
        print(f"\n{g}   AUC answerable vs out-of-corpus: {auc([r['off'] for r in pos], [r['off'] for r in neg]):.3f} → "
              f"{auc([r['on'] for r in pos], [r['on'] for r in neg]):.3f}")
        if "fit_pass" in sel[0]:
            fitted = lambda xs: np.mean([passes(x, x["fit_pass"]) for x in xs]) if xs else float("nan")
            fitted_ref = lambda xs: np.mean([x["on"] < x["fit_abort"] or bool(x.get("other_law")) for x in xs]) if xs else float("nan")
            per = {r["group"]: r for r in sel}
            cost = sum(r["fit_seconds"] for r in per.values()) / sum(r["chunks"] for r in per.values()) * 1000
            idx = sum(r["index_seconds"] for r in per.values()) / sum(r["chunks"] for r in per.values()) * 1000
            lines = ", ".join(f"{g2} {r['fit_pass']:.3f}/{r['fit_abort']:.3f}" + (f" (defaults: {r['fit_kept']})" if r.get("fit_kept") else "") for g2, r in per.items())
            near = [r for r in sel if r["kind"] == "near_ooc"]
            print(f"  gate fitted on probes (pass/refuse: {lines}; {cost:.1f} s per 1k chunks, indexing {idx:.1f} s per 1k chunks):\n"
                  f"    answerable passed at once {fitted(pos):.2f} (fixed 0.3: {np.mean([passes(x, hi) for x in pos]):.2f}), refused at once {fitted_ref(pos):.2f}; "
                  f"out-of-corpus passed {fitted(neg):.2f} (near-domain {fitted(near):.2f}), refused at once {fitted_ref(neg):.2f}")
        tried = [r for r in sel if r.get("rescue") is not None]
        if tried:
            ok = lambda r, line: r["rescue"] >= line
            print("  free rescue below the abort line (one glossary rewrite), by kind: " + "; ".join(
                f"{k} {sum(1 for r in tried if r['kind'] == k)} tried, passed {sum(ok(r, hi) for r in tried if r['kind'] == k)} (fixed line) / "
                f"{sum(ok(r, r.get('fit_pass', hi)) and r['on'] < r.get('fit_abort', lo) for r in tried if r['kind'] == k)} (fitted line)"
                for k in dict.fromkeys(r["kind"] for r in tried)))
        if any("rewrite" in r for r in sel) and "fit_pass" in sel[0]:
            after = lambda r: not r.get("other_law") and (r["on"] >= r["fit_pass"] or (r.get("rewrite") is not None and r["rewrite"] >= r["fit_pass"]))
            print("  passed at once or after the offline rewrite (fitted line): " + "; ".join(
                f"{k} {sum(after(r) for r in sel if r['kind'] == k)}/{sum(r['kind'] == k for r in sel)} "
                f"(rewritten {sum(r.get('rewrite') is not None for r in sel if r['kind'] == k)}, passed by it "
                f"{sum(after(r) and r['on'] < r['fit_pass'] for r in sel if r['kind'] == k)}; refused as framed by a law not indexed "
                f"{sum(bool(r.get('other_law')) for r in sel if r['kind'] == k)})"
                for k in ("answerable", "ooc", "near_ooc") if any(r["kind"] == k for r in sel)))
        for kind, f, what in [("answerable", lambda v: v >= hi, "passed at once"), ("answerable", lambda v: v < lo, "refused at once"),
                              ("absent", lambda v: v >= hi, "passed at once"), ("ooc", lambda v: v >= hi, "passed"),
                              ("near_ooc", lambda v: v >= hi, "passed"), ("fit_answerable", lambda v: v >= hi, "passed at once"),
                              ("fit_ooc", lambda v: v >= hi, "passed")]:
            xs = [r for r in sel if r["kind"] == kind]
            if xs: print(f"  {kind:15s} {what:16s} n={len(xs):3d}  {cell(xs, f)}")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--groups", default=",".join([*GROUPS, "fire-35"]))
    ap.add_argument("--json", help="write the per-question scores here")
    ap.add_argument("--report", help="print the report of a saved --json run instead of running")
    args = ap.parse_args(argv)
    if args.report: report(json.loads(Path(args.report).read_text(encoding="utf-8"))); return 0
    rows = []
    for group in args.groups.split(","):
        paths, qs = group_corpus(group)
        p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
        t = time.perf_counter(); p.index(paths, progress=False)
        t_index = time.perf_counter() - t
        off, on = best_scores(p, qs, False), best_scores(p, qs, True)
        cal, _ = p.fit_gate(save=False)       # no labels: the pass line above every unanswerable probe (query-level adjustment on)
        kept = getattr(cal, "not_recorded", "too_few_probes" if cal.too_few_probes else None)   # not recorded: the user's gate keeps the defaults
        line = (p.settings.crag_score_threshold, p.settings.crag_abort_threshold) if kept else (cal.pass_threshold, cal.abort_threshold)
        print(f"## {group}: {p.store.count()} chunks indexed in {t_index:.0f} s, {len(qs)} questions; gate fitted on probes in "
              f"{cal.seconds:.0f} s: pass ≥ {cal.pass_threshold:.3f}, refuse < {cal.abort_threshold:.3f}"
              + (f" (not recorded, {kept}: the gate keeps {line[0]} / {line[1]})" if kept else ""), file=sys.stderr)
        fit = {"fit_pass": line[0], "fit_abort": line[1], "fit_kept": kept, "fit_seconds": cal.seconds, "chunks": p.store.count(), "index_seconds": round(t_index, 1)}
        rows += [{"group": group, "kind": k, "question": q, "off": a, "on": b, "rescue": rescue_score(p, q, b), "other_law": framed_elsewhere(p, q),
                  "rewrite": rewrite_score(p, q, b, line[0]), **fit} for (k, q), a, b in zip(qs, off, on)]
    if args.json: Path(args.json).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    report(rows)
    return 0

if __name__ == "__main__": sys.exit(main())
