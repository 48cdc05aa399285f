"""Near-domain negatives made from the corpus itself (issue 26): would they set the probe-fitted pass line better?

    python bench/probe_near.py --scores near.json                 # index each group, score everything (≈ 15 min), report
    python bench/probe_near.py --report near.json                 # the report of a saved run, nothing re-run

The bundled pool's concepts (tax, schools, patents …) are far from most corpora, so on a corpus of technical standards
no pool probe scores above 0.04 and the line falls where real near-domain questions pass. The indexed documents name
their neighbours themselves: every 「law」 they cite that the index does not hold (소방기본법, 건축법 and 위험물안전관리법
over the fire-safety laws; 민법 and 도로교통법 over 자동차손해배상 보장법). Each such law is asked in four forms
(`LAW_FORMS`: its reporting procedure, its sanctions, whom it applies to, its deadlines) and read, like a pool concept,
by its mean over them.

For every group this scores the real questions of `bench/gate_corpora.py` (answerable; out-of-corpus and near-domain),
the glossary's one rewrite of each (the answer path's offline rewrite, counted as answered when it clears the line), the
package's probes (`probe_questions`) and the cited-law probes; then each rule family below sets a line per corpus, its
one number chosen under leave-one-corpus-out cross-validation on the development corpora (answered share minus
out-of-corpus share), and is judged on the corpus left out. The held-out groups of bench/data/gate_fresh2.jsonl are
reported only with --held, after a rule is chosen."""
import argparse, json, re, sys, time
from collections import defaultdict
from pathlib import Path
from statistics import fmean
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
DEV = ["fire_codes", "motor", "labor_privacy", "commercial", "fire", "civil_health", "fire-35",
       "nuclear_terms", "fraud_act", "seismic_hydrant",                           # gate_fresh2: read at stop 46
       "motor_decree", "fire_decree", "apartment_code", "privacy_act"]            # gate_fresh3: read at stop 46
HELD = ["sprinkler_code", "fire_facility_rule", "fire_prevention_act", "health_insurance_act"]   # gate_fresh4: not yet run
CITED = re.compile(r"「\s*([^」\n]{2,60}?)\s*」")
TAIL = re.compile(r"(?:에관한(?:특별)?법률|(?:특별)?법률|특별법|법)?(?:시행령|시행규칙)?$")
LAW_FORMS = ("{t}에 따른 신고 절차는 어떻게 되나요?", "{t}을 위반하면 어떤 처벌을 받나요?", "{t}의 적용 대상은 무엇인가요?", "{t}에서 정한 기한은 언제까지인가요?")

def cited_laws(texts, titles) -> list[tuple[str, int]]:
    "(law as written, times cited) of every 「law」 the texts cite that no title is, shortens or shares a 6-letter run of its name with."
    from cragrag.text.korean import law_match, law_norm
    core = lambda n: TAIL.sub("", law_norm(n) or "")
    shares = lambda a, b: (a in b or b in a) if min(len(a), len(b)) < 6 else any(a[i:i + 6] in b for i in range(len(a) - 5))
    seen = {}
    for t in texts:
        for m in CITED.finditer(t): seen.setdefault(law_norm(m[1]), [" ".join(m[1].split()), 0])[1] += 1
    tn, tc = [law_norm(x) for x in titles], [core(x) for x in titles]
    keep = [(name, c) for k, (name, c) in seen.items() if not any(law_match(k, x) for x in tn) and not any(shares(core(k), x) for x in tc if x)]
    return sorted(keep, key=lambda x: -x[1])

def law_question(law: str, form: str) -> str:
    from cragrag.text.korean import with_particle
    return form.replace("{t}을", with_particle(law, "을")).replace("{t}", law)

def score_groups(groups, out_path: Path) -> dict:
    from gate_corpora import GLOSSARY, framed_elsewhere, group_corpus
    from cragrag.answering.pipeline import Pipeline
    from cragrag.decide.gate import top_score
    from cragrag.decide.probes import indexed_articles, probe_questions
    out = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {}
    for g in groups:
        if g in out: continue
        paths, qs = group_corpus(g)
        p = Pipeline(qdrant_path=":memory:", trace_enabled=False); t0 = time.perf_counter(); p.index(paths, progress=False)
        sc = lambda q: top_score(p.retrieve(q).sources) or 0.0
        gl, arts = GLOSSARY.over(p.index_texts), indexed_articles(p.store)
        laws = cited_laws([t for _, t in arts.values()], p.indexed_titles())
        real = []
        for k, q in qs:
            nq = gl.rewrite(q)
            real.append({"kind": k, "q": q, "score": sc(q), "rewrite": None if not nq else sc(nq), "other_law": framed_elsewhere(p, q)})
        probes = [{"q": x.question, "answerable": x.answerable, "kind": x.kind, "concept": x.concept, "score": sc(x.question)} for x in probe_questions(p.store)]
        cited = [{"q": law_question(n, f), "concept": n, "count": c, "score": sc(law_question(n, f))} for n, c in laws[:40] for f in LAW_FORMS]
        out[g] = {"real": real, "probes": probes, "cited": cited, "chunks": p.store.count()}
        print(f"## {g}: {p.store.count()} chunks, {len(laws)} cited laws not indexed, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        out_path.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return out

def answerable_probes(d: dict) -> list[float]: return [r["score"] for r in d["probes"] if r["answerable"]]

def kept(d: dict) -> tuple[list[float], list[float], list[float]]:
    "Everyday, pool-concept and cited-law negatives below the median answerable probe (as `probe_line` reads them)."
    pos = [r["score"] for r in d["probes"] if r["answerable"]]
    bar = float(np.quantile(pos, 0.5))
    alone, by = [], defaultdict(list)
    for r in d["probes"]:
        if not r["answerable"]: (alone if not r["concept"] else by[r["concept"]]).append(r["score"])
    cb = defaultdict(list)
    for r in d["cited"]: cb[r["concept"]].append(r["score"])
    k = lambda xs: [x for x in xs if x < bar]
    return k(alone), k([fmean(v) for v in by.values()]), k([fmean(v) for v in cb.values()])

q = lambda xs, th: float(np.quantile(xs, th)) if xs else 0.0
FAMILIES = {   # name -> (line(everyday, pool, cited, θ), grid of θ)
    "package rule (best negative, pool only)": (lambda a, n, c, th: max(a + n), [None]),
    "package rule + margin θ": (lambda a, n, c, th: max(a + n) + th, [0, 0.01, 0.02, 0.03, 0.05]),
    "max(package rule, θ-quantile of cited laws)": (lambda a, n, c, th: max(max(a + n), q(c, th)), [0.5, 0.6, 0.7, 0.8, 0.9]),
    "θ-quantile of cited laws alone": (lambda a, n, c, th: q(c, th) if c else max(a + n), [0.5, 0.6, 0.7, 0.8, 0.9]),
    "θ-quantile of pool ∪ cited concepts": (lambda a, n, c, th: q(n + c, th), [0.8, 0.85, 0.9, 0.95, 0.97]),
    "best negative, pool ∪ cited": (lambda a, n, c, th: max(a + n + c), [None]),
}
PACKAGE = "package rule as shipped (defaults when too few or weak probes)"
GAP_FAMILIES = {   # name -> (line(answerable probes, everyday + pool negatives, θ), grid of θ): a floor from the index's own probes
    PACKAGE: (lambda pos, neg, th: shipped(pos, neg), [None]),
    "max(shipped, θ × median answerable probe)": (lambda pos, neg, th: max(shipped(pos, neg), th * q(pos, 0.5)), [0.2, 0.3, 0.4, 0.5, 0.6]),
    "max(shipped, θ × lower quartile of answerable probes)": (lambda pos, neg, th: max(shipped(pos, neg), th * q(pos, 0.25)), [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]),
    "max(shipped, best negative + θ × (lower quartile − best negative))":
        (lambda pos, neg, th: max(shipped(pos, neg), max(neg) + th * max(0.0, q(pos, 0.25) - max(neg))), [0.1, 0.2, 0.3, 0.4, 0.5]),
}

def shipped(pos: list[float], neg: list[float]) -> float:
    "The line `Pipeline.fit_gate` leaves in use: just above the best kept negative, or the configured 0.3 when the fit is not recorded."
    line, med = min(0.5, max(neg) + 1e-4), q(pos, 0.5)
    return 0.3 if len(pos) < 20 or (med < 0.3 and line < 0.1) else line

def judge(d: dict, line: float, rewrite: bool) -> tuple[float, float]:
    "(answerable answered, out-of-corpus passed) at `line` (capped at 0.5 as `probe_line` is); with `rewrite`, the rewrite counts; a question\n    framed by a law the index does not hold (`law_not_indexed`, recorded since stop 47) never passes."
    t = min(0.5, line + 1e-4)
    ok = lambda r: not r.get("other_law") and (r["score"] >= t or (rewrite and r["rewrite"] is not None and r["rewrite"] >= t))
    a = [ok(r) for r in d["real"] if r["kind"] == "answerable"]; o = [ok(r) for r in d["real"] if r["kind"] in ("ooc", "near_ooc")]
    return float(np.mean(a)), float(np.mean(o))

def report(data: dict, held: bool) -> None:
    dev = [g for g in DEV if g in data]
    for rewrite in (False, True):
        print(f"\n### {'answered at once or after the offline rewrite' if rewrite else 'passed at once'} (answerable / out-of-corpus passed)")
        for name, (f, grid) in FAMILIES.items():
            line = lambda g, th: f(*kept(data[g]), th)
            cells, dv = [], []
            for g in dev + ([h for h in HELD if h in data] if held else []):
                pool = [x for x in dev if x != g]
                th = max(grid, key=lambda th: np.mean([(lambda a, o: a - o)(*judge(data[x], line(x, th), rewrite)) for x in pool])) if grid[0] is not None else None
                a, o = judge(data[g], line(g, th), rewrite); cells.append(f"{g} [{th}] {min(0.5, line(g, th)):.3f}: {a:.2f}/{o:.2f}")
                if g in dev: dv.append((a, o))
            met = sum(a >= 0.85 and o <= 0.10 for a, o in dv)
            print(f"{name:45s} development mean {np.mean([a for a, _ in dv]):.3f} / {np.mean([o for _, o in dv]):.3f}, both targets met on {met}/{len(dv)}\n    " + "; ".join(cells))

def report_gap(data: dict, held: bool) -> None:
    "The floor families, θ chosen under leave-one-corpus-out on targets met (answered ≥ 0.85, out-of-corpus ≤ 0.10) plus half the margin."
    dev = [g for g in DEV if g in data]
    obj = lambda a, o: (a >= 0.85) + (o <= 0.10) + 0.5 * (a - o)
    print("\n### a floor from the index's own answerable probes (answered at once or after the offline rewrite / out-of-corpus passed)")
    for name, (f, grid) in GAP_FAMILIES.items():
        line = lambda g, th: f(answerable_probes(data[g]), [*kept(data[g])[0], *kept(data[g])[1]], th)
        cells, dv = [], []
        for g in dev + ([h for h in HELD if h in data] if held else []):
            pool = [x for x in dev if x != g]
            th = max(grid, key=lambda th: np.mean([obj(*judge(data[x], line(x, th), True)) for x in pool])) if grid[0] is not None else None
            a, o = judge(data[g], line(g, th), True); cells.append(f"{g} [{th}] {min(0.5, line(g, th)):.3f}: {a:.2f}/{o:.2f}")
            if g in dev: dv.append((a, o))
        met = sum(a >= 0.85 and o <= 0.10 for a, o in dv)
        print(f"{name:45s} development mean {np.mean([a for a, _ in dv]):.3f} / {np.mean([o for _, o in dv]):.3f}, both targets met on {met}/{len(dv)}\n    " + "; ".join(cells))

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scores", help="score the groups (resuming this file) and report")
    ap.add_argument("--report", help="report a saved run, nothing re-run")
    ap.add_argument("--groups", default=",".join(DEV))
    ap.add_argument("--held", action="store_true", help="also report the held-out groups (run them with --groups first)")
    args = ap.parse_args(argv)
    data = json.loads(Path(args.report).read_text(encoding="utf-8")) if args.report else score_groups(args.groups.split(","), Path(args.scores or "probe_near.json"))
    report(data, args.held); report_gap(data, args.held)
    return 0

if __name__ == "__main__": sys.exit(main())
