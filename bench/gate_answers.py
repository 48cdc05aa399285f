"""What the user sees on a corpus whose gate was fitted on probes: does `answer()` refuse out-of-corpus questions, and
answer answerable ones, end to end? Prints figures; asserts nothing.

    python bench/gate_answers.py                                   # the small single-document corpora of gate_fresh2/3
    python bench/gate_answers.py --groups motor_decree --json out.json
    python bench/gate_answers.py --baseline out.json                # per-question wins and losses against an earlier run
    python bench/gate_answers.py --groups a,b,c --lines 0.02,0.05,0.1,0.16,0.3   # also at fixed lines; one line chosen leaving one corpus out

`bench/gate_corpora.py` measures the gate alone: a question whose best score clears the fitted pass line counts as
passed. The answer path has a second, deterministic check after the gate: the offline answer names the value the
question asks for (`cragrag.text.slots`) or says 미확인 (`failure_reason`), and never asserts what its evidence does not
hold. This bench indexes each group as `cragrag index` does (the gate fitted on probes and recorded), asks every
question through `Pipeline.answer` with the offline defaults (no model, so every outcome costs 0 LLM calls), and counts:
- answerable questions answered: not refused and no `failure_reason`;
- out-of-corpus questions refused by the gate (`is_refusal`), and refused or failed explicitly (미확인: no value asserted);
- why the answerable questions not answered were not: the gate's refusal reason or the answer's failure reason.
- where the set gives the asked value (gate_fresh7's `value`): how many answered questions hold it (spaces ignored), since an
  answer that is not 미확인 may still quote another value.
Every rate comes with a 95 % bootstrap interval."""
import argparse, json, sys, time
from collections import Counter
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from gate_corpora import FRESH_GROUPS, fresh_values, group_corpus   # noqa: E402
from cragrag.answering.pipeline import Pipeline         # noqa: E402
from cragrag.evaluate.eval import bootstrap_ci          # noqa: E402

DEFAULT = ["nuclear_terms", "fraud_act", "seismic_hydrant", "motor_decree", "fire_decree", "apartment_code", "privacy_act"]

VALUES = fresh_values()   # the asked value of the fresh questions that carry one

def asked(p: Pipeline, group: str, kind: str, q: str, **extra) -> dict:
    "One question through `p.answer`: what the user sees (refused and why, the answer's failure reason, whether it holds the asked value where the set gives one)."
    res = p.answer(q)
    fr = getattr(res, "failure_reason", None) or (res.grounded or {}).get("failure_reason")
    v = VALUES.get((group, q))
    holds = None if v is None else "".join(v.split()) in "".join(res.answer.split()) and not res.is_refusal and not fr
    return {"group": group, "kind": "ooc" if kind in ("ooc", "near_ooc") else kind, "question": q, "refused": res.is_refusal,
            "refusal_reason": res.refusal_reason, "failure_reason": fr, "answer": res.answer[:200], "holds_value": holds, **extra}

def run_group(group: str, lines: tuple[float, ...] = ()) -> list[dict]:
    "Each question of `group` through the gate `cragrag index` fits; then, with `lines`, again at each fixed pass line (refuse line min(line, 0.1))."
    paths, qs = group_corpus(group)
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    t = time.perf_counter(); p.index(paths, progress=False); cal, _ = p.fit_gate()
    nr = getattr(cal, "not_recorded", None)
    print(f"## {group}: {p.store.count()} chunks, {len(qs)} questions, indexed and fitted in {time.perf_counter() - t:.0f} s; "
          f"fit pass ≥ {cal.pass_threshold:.3f}" + (f" (not recorded: {nr})" if nr else ""), file=sys.stderr)
    out = [asked(p, group, kind, q, not_recorded=nr) for kind, q in qs]
    for line in lines:   # the same index (its store shared), thresholds set explicitly: they win over the recorded fit
        at = Pipeline(p.settings, store=p.store, crag_score_threshold=line, crag_abort_threshold=min(line, p.settings.crag_abort_threshold))
        out += [asked(at, group, kind, q, line=line) for kind, q in qs]
    return out

def report(rows: list[dict]) -> None:
    ci = lambda xs: (lambda c: f"{c.mean:.2f} [{c.lo:.2f}, {c.hi:.2f}]")(bootstrap_ci([float(x) for x in xs])) if xs else "—"
    groups = list(dict.fromkeys(r["group"] for r in rows))
    print("group            answerable answered        out-of-corpus refused (gate)   refused or 미확인")
    for g in groups + (["all"] if len(groups) > 1 else []):
        sel = [r for r in rows if g in ("all", r["group"])]
        a = [r for r in sel if r["kind"] == "answerable"]; o = [r for r in sel if r["kind"] == "ooc"]
        print(f"{g:16s} {sum(not r['refused'] and not r['failure_reason'] for r in a):3d}/{len(a):<3d} {ci([not r['refused'] and not r['failure_reason'] for r in a]):18s}"
              f"  {sum(r['refused'] for r in o):3d}/{len(o):<3d} {ci([r['refused'] for r in o]):18s}"
              f"  {sum(r['refused'] or bool(r['failure_reason']) for r in o):3d}/{len(o):<3d} {ci([r['refused'] or bool(r['failure_reason']) for r in o])}")

def values(rows: list[dict]) -> None:
    "Of the answerable questions whose set gives the asked value: how many answers hold it (spaces ignored), per group; an answer that is not 미확인 may still quote another value."
    vs = [r for r in rows if r["kind"] == "answerable" and r.get("holds_value") is not None]
    if not vs: return
    print("\nanswerable questions with a gold value: answered / answered holding the value")
    for g in dict.fromkeys(r["group"] for r in vs):
        sel = [r for r in vs if r["group"] == g]
        print(f"  {g:22s} {sum(not r['refused'] and not r['failure_reason'] for r in sel):3d} / {sum(r['holds_value'] for r in sel):3d} of {len(sel)}")

def reasons(rows: list[dict]) -> None:
    "Why answerable questions were not answered, per group: the gate's refusal (no_topic: below the refuse line; no_rewrite: in the band, no rewrite passed; law_not_indexed) or the answer's failure (미확인 …)."
    print("\nanswerable questions not answered, by reason")
    for g in dict.fromkeys(r["group"] for r in rows):
        c = Counter(r["refusal_reason"] if r["refused"] else r["failure_reason"] for r in rows
                    if r["group"] == g and r["kind"] == "answerable" and (r["refused"] or r["failure_reason"]))
        print(f"  {g:22s} " + (", ".join(f"{k} {v}" for k, v in c.most_common()) or "none"))

def ok(r: dict) -> bool:
    "The outcome the user wants: an answerable question answered, an out-of-corpus one refused or 미확인."
    return (not r["refused"] and not r["failure_reason"]) if r["kind"] == "answerable" else (r["refused"] or bool(r["failure_reason"]))

def compare(rows: list[dict], base: list[dict]) -> None:
    "Per-question wins and losses against `base` (rows of an earlier run, matched by group and question)."
    old = {(r["group"], r["question"]): r for r in base}
    pairs = [(old[k], r) for r in rows if (k := (r["group"], r["question"])) in old]
    wins = [n for o, n in pairs if ok(n) and not ok(o)]; losses = [n for o, n in pairs if ok(o) and not ok(n)]
    print(f"\nagainst the baseline ({len(pairs)} questions in both): {len(wins)} wins, {len(losses)} losses")
    for tag, rs in (("win", wins), ("loss", losses)):
        for r in rs: print(f"  {tag:4s} {r['group']:16s} {r['kind']:10s} {r['question'][:70]}")

def by_line(rows: list[dict]) -> None:
    "At each fixed line: answerable answered and out-of-corpus refused or 미확인 over all groups; then one line for every index,\n    chosen on the other groups (leave one corpus out, by the sum of the two), against the gate `cragrag index` fits, over all\n    groups and over those whose probe fit is not recorded (the defaults stay there)."
    fitted = [r for r in rows if r.get("line") is None]
    lines = sorted({r["line"] for r in rows if r.get("line") is not None})
    if not lines: return
    count = lambda rs: (sum(ok(r) for r in rs if r["kind"] == "answerable"), sum(ok(r) for r in rs if r["kind"] == "ooc"))
    at = lambda g, L: [r for r in rows if r["group"] == g and r.get("line") == L]
    na, no = (sum(r["kind"] == k for r in fitted) for k in ("answerable", "ooc"))
    print(f"\nfixed lines, all groups ({na} answerable, {no} out-of-corpus): answered / refused or 미확인")
    print("  fitted gate  " + "{} / {}".format(*count(fitted)))
    for L in lines: print(f"  line {L:<7.3g} " + "{} / {}".format(*count([r for r in rows if r.get("line") == L])))
    groups = list(dict.fromkeys(r["group"] for r in fitted))
    weak = [g for g in groups if any(r.get("not_recorded") for r in fitted if r["group"] == g)]
    for name, scope in (("every group", groups), ("groups whose probe fit is not recorded", weak)):
        if len(scope) < 2: continue
        print(f"\none line chosen on the other groups, {name} ({len(scope)}):")
        tot_f, tot_c = [0, 0], [0, 0]
        for g in scope:
            L = max(lines, key=lambda L: sum(map(sum, (count(at(h, L)) for h in scope if h != g))))   # ties: the lower line
            f, c = count([r for r in fitted if r["group"] == g]), count(at(g, L))
            tot_f, tot_c = [a + b for a, b in zip(tot_f, f)], [a + b for a, b in zip(tot_c, c)]
            print(f"  {g:22s} line {L:<6.3g} answered {f[0]:2d} -> {c[0]:2d}   refused or 미확인 {f[1]:2d} -> {c[1]:2d}")
        print(f"  {'all':22s}             answered {tot_f[0]:3d} -> {tot_c[0]:3d}  refused or 미확인 {tot_f[1]:3d} -> {tot_c[1]:3d}")

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--groups", default=",".join(DEFAULT), help=f"any of {', '.join(FRESH_GROUPS)} or a bench/gate_corpora.py group")
    ap.add_argument("--json", help="write the per-question rows here")
    ap.add_argument("--lines", help="also answer at these fixed pass lines (comma-separated, e.g. 0.02,0.05,0.1,0.16,0.3) and choose one line for every index leaving one corpus out")
    ap.add_argument("--baseline", help="per-question rows of an earlier run (--json): print wins and losses against it")
    ap.add_argument("--compare", help="report these rows (--json of a run) instead of running; with --baseline, compare them")
    args = ap.parse_args(argv)
    load = lambda f: json.loads(Path(f).read_text(encoding="utf-8"))
    lines = tuple(float(x) for x in args.lines.split(",")) if args.lines else ()
    rows = load(args.compare) if args.compare else [r for g in args.groups.split(",") for r in run_group(g, lines)]
    if args.json and not args.compare: Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=0), encoding="utf-8")
    fitted = [r for r in rows if r.get("line") is None]
    report(fitted); values(fitted); reasons(fitted); by_line(rows)
    if args.baseline: compare(fitted, [r for r in load(args.baseline) if r.get("line") is None])
    return 0

if __name__ == "__main__": sys.exit(main())
