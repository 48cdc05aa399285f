"""Answers that answer: does the offline answer hold the value the question asks for, or say 미확인? Prints figures; asserts nothing.

    python bench/answers.py                       # the held-out set (bench/data/answer_slots_heldout.jsonl)
    python bench/answers.py --set dev             # the development set (bench/data/answer_slots_dev.jsonl)
    python bench/answers.py --set fresh           # questions written after the last tuning, before it was measured (bench/data/answer_slots_fresh.jsonl)
    python bench/answers.py --json out.json       # also the per-question rows (for --baseline of a later run)
    python bench/answers.py --baseline out.json   # per-question wins and losses against an earlier run
    python bench/answers.py --fit-gate            # the shared-law groups with the gate fitted on probes, as `cragrag index` does
    python bench/answers.py --set values --modes default,grounded --curve   # the direct-answer set (250 value questions, 15 laws), per mode, with the curve
    python bench/answers.py --set fresh_values    # 240 more value questions over 16 more laws, written blind after the first set was tuned on
    python bench/answers.py --set blind_values    # 96 over 6 more laws: run only on what ships, never to choose a rule
    python bench/answers.py --set values --modes default,grounded,sufficiency,multi_query,three_way
                                                  # the direct-answer set: 250 questions over 15 laws of the whole-law archive in 5 groups,
                                                  # written before any tuning; presented-answer precision, coverage, absent handled and mode
                                                  # agreement per mode and per group, and the selective-answer curve (--curve)

Each group of questions is asked over its own documents (the insurance group over the bundled demo corpus, the others
over laws of ../shared/corpus), indexed fresh in memory with the offline defaults, through `Pipeline.answer`:
- answerable value questions: the answer holds a gold value (spaces ignored) and does not end in 미확인/refusal;
- absent-value questions: the answer is refused or ends in 미확인 / 문서 없음 (`failure_reason`);
- citation precision: cited chunks (`citations[].supported_by_chunks`) whose article is a gold article, and the same over
  distinct cited articles (a claim citing an article is supported by all of its chunks in the context, so the chunk
  figure moves with how many chunks of each article the context holds; the article figure does not);
- slot detection: `cragrag.text.slots.asked_slot(question).slot` equals the labelled slot (when that module exists).
Every rate comes with a 95 % bootstrap interval. The held-out file was written before any tuning; tune on --set dev."""
import argparse, collections, json, sys, time
from pathlib import Path
from cragrag.answering.pipeline import Pipeline
from cragrag.evaluate.eval import bootstrap_ci
from cragrag.indexing.documents import load_demo_corpus

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus" / "legalize-kr"
GROUPS = {"insurance": None,   # the bundled demo corpus
          "labor_privacy": ["근로기준법_법률", "개인정보보호법_법률"],
          "motor": ["자동차손해배상보장법_법률", "자동차손해배상보장법_시행령"],
          "civil_health": ["민법_법률", "국민건강보험법_법률"],
          "fire": ["소방시설설치및관리에관한법률_법률", "소방시설설치및관리에관한법률_시행령", "소방시설설치및관리에관한법률_시행규칙",
                   "화재의예방및안전관리에관한법률_법률", "화재의예방및안전관리에관한법률_시행령"]}

ARCHIVE = ROOT.parent / "shared" / "corpus" / "legalize-kr-all" / "kr-7460e2a.tar.gz"
VALUE_GROUPS = {   # the direct-answer set's groups: laws this project never indexed before the set was written (kr/<law>/<kind>.md of the archive)
    "lease": ["주택임대차보호법/법률", "주택임대차보호법/시행령", "상가건물임대차보호법/법률"],
    "wage": ["최저임금법/법률", "최저임금법/시행령", "근로자퇴직급여보장법/법률"],
    "consumer": ["전자상거래등에서의소비자보호에관한법률/법률", "할부거래에관한법률/법률", "이자제한법/법률(법률)"],
    "family_youth": ["청소년보호법/법률", "남녀고용평등과일ㆍ가정양립지원에관한법률/법률", "가사근로자의고용개선등에관한법률/법률"],
    "services": ["공중위생관리법/법률", "학원의설립ㆍ운영및과외교습에관한법률/법률", "학원의설립ㆍ운영및과외교습에관한법률/시행령"],
    # the second set (answer_values_fresh), written blind after the first had been tuned on: 16 more laws never indexed
    "building": ["집합건물의소유및관리에관한법률/법률", "공인중개사법/법률", "부동산거래신고등에관한법률/법률"],
    "employment": ["기간제및단시간근로자보호등에관한법률/법률", "파견근로자보호등에관한법률/법률", "고용보험법/법률"],
    "civil": ["신원보증법/법률", "보증인보호를위한특별법/법률", "가등기담보등에관한법률/법률", "실화책임에관한법률/법률", "교통사고처리특례법/법률"],
    "commerce": ["방문판매등에관한법률/법률", "약관의규제에관한법률/법률", "주차장법/법률"],
    "civic": ["여권법/법률", "민방위기본법/법률", "민방위기본법/시행령"],
    # the third (answer_values_blind), written blind and run only on the shipped reader: 6 more laws
    "leisure": ["게임산업진흥에관한법률/법률", "체육시설의설치ㆍ이용에관한법률/법률", "노인복지법/법률"],
    "utility": ["도시가스사업법/법률", "하수도법/법률", "아동복지법/법률"]}
VALUE_SETS = {"values": "answer_values_heldout", "fresh_values": "answer_values_fresh", "blind_values": "answer_values_blind"}   # --set: the direct-answer sets
READER: dict = {}   # --reader key=value: ExtractiveLLM attributes set for the run
MODES = {"default": {}, "grounded": {"grounded_answer": True}, "sufficiency": {"answer_mode": "sufficiency"},
         "multi_query": {"multi_query": True}, "three_way": {"crag_mode": "three_way"}}

def value_group_paths(group: str) -> list[Path]:
    "The group's laws, unpacked once from the whole-law archive into bench/.cache/laws as <law>_<kind>.md (the file stem is the doc id the gold names)."
    import tarfile
    out, want = ROOT / "bench" / ".cache" / "laws", VALUE_GROUPS[group]
    paths = [out / f"{m.split('/')[0]}_{m.split('/')[1].split('(')[0]}.md" for m in want]
    if not all(p.is_file() for p in paths):
        out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(ARCHIVE) as tar:
            for m, p in zip(want, paths): p.write_bytes(tar.extractfile(f"kr/{m}.md").read())
    return paths

def direct_features(res, direct: str = "") -> dict:
    "What the selective-answer curve reads: the best source score, and the score and rank of the article the direct answer cites."
    import re
    scored = [s for s in res.sources if s.rerank_score is not None]
    arts = list(dict.fromkeys((s.metadata.get("doc_title"), s.metadata.get("article_id")) for s in sorted(scored, key=lambda s: -s.rerank_score)))
    m = re.search(r"「([^」]+)」\s*(제\d+조(?:의\d+)?)", direct)
    at = next((i for i, a in enumerate(arts) if m and a == (m[1], m[2])), None)
    score = max((s.rerank_score for s in scored if m and (s.metadata.get("doc_title"), s.metadata.get("article_id")) == (m[1], m[2])), default=None)
    return {"best": max((s.rerank_score for s in scored), default=None), "lead_score": score, "lead_rank": at}

def run_values(group: str, rows: list[dict], modes: list[str]) -> list[dict]:
    "Every question of `group` in every mode over the group's laws indexed alone, the gate fitted as `cragrag index` fits it."
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    for k, v in READER.items(): setattr(p.llm, k, v)   # --reader: the offline reader's switches under test
    t = time.perf_counter(); p.index(value_group_paths(group), progress=False, **({"fit_gate": False} if "fit_gate" in Pipeline.index.__code__.co_varnames else {}))
    cal, _ = p.fit_gate()
    print(f"## {group}: {len(rows)} questions, {p.store.count()} chunks in {time.perf_counter() - t:.0f} s; gate pass ≥ {cal.pass_threshold:.3f}, "
          f"refuse < {cal.abort_threshold:.3f} ({p.gate_source})", file=sys.stderr)
    out = []
    for r in rows:
        for mode in modes:
            res = p.answer(r["question"], **MODES[mode])
            fr = getattr(res, "failure_reason", None) or (res.grounded or {}).get("failure_reason")
            direct = getattr(res, "direct_answer", None) or ("" if res.is_refusal else res.answer.strip().split("\n", 1)[0])   # before direct_answer: the first line
            presented = not res.is_refusal and not fr and bool(direct) and direct != "미확인" and not direct.startswith("[미확인]")
            holds = presented and any(squash(v) in squash(direct) for v in r["value"])
            out.append({"id": r["id"], "group": group, "mode": mode, "slot": r["slot"], "style": r["style"], "answerable": r["answerable"],
                        "one_sentence": r.get("one_sentence", True), "presented": presented, "holds": holds,
                        "refused": res.is_refusal, "refusal_reason": res.refusal_reason, "failure_reason": fr, "direct": direct[:200],
                        "ok": holds if r["answerable"] else not presented, **direct_features(res, direct)})
    return out

def value_report(rows: list[dict]) -> dict:
    "Presented-answer precision, coverage, absent handled (each with its interval) of one mode's rows."
    pres = [r for r in rows if r["presented"]]
    return {"presented-answer precision": bootstrap_ci([float(r["answerable"] and r["holds"]) for r in pres]),
            "coverage (answerable)": bootstrap_ci([float(r["holds"]) for r in rows if r["answerable"]]),
            "absent refused or 미확인": bootstrap_ci([float(not r["presented"]) for r in rows if not r["answerable"]])}

def agreement(rows: list[dict], modes: list[str]) -> float:
    "Share of one-sentence questions on which every mode gives the same direct answer (or the same: none presented)."
    by = collections.defaultdict(dict)
    for r in rows:
        if r["one_sentence"]: by[r["id"]][r["mode"]] = r["direct"] if r["presented"] else "-"
    qs = [v for v in by.values() if len(v) == len(modes)]
    return sum(len(set(v.values())) == 1 for v in qs) / max(len(qs), 1)

def selective_curve(rows: list[dict], key: str = "lead_score") -> list[tuple[float, float, float, int]]:
    "(threshold, precision, coverage, presented) when an answer is presented only if its `key` reaches the threshold: the selective-answer curve of one mode."
    ts = sorted({r[key] for r in rows if r["presented"] and r[key] is not None})
    n_ans, out = sum(r["answerable"] for r in rows), []
    for t in [0.0] + ts:
        pres = [r for r in rows if r["presented"] and (r[key] or 0) >= t]
        right = sum(r["answerable"] and r["holds"] for r in pres)
        out.append((t, right / len(pres) if pres else 1.0, right / max(n_ans, 1), len(pres)))
    return out

def lowest_threshold(rows: list[dict], target: float = 0.95, key: str = "lead_score") -> float:
    "The lowest threshold on `key` whose presented answers reach `target` precision on `rows` (the highest score seen + ε when none does)."
    for t, prec, _, n in selective_curve(rows, key):
        if n and prec >= target: return t
    return max((r[key] or 0 for r in rows), default=0.0) + 1e-6

def leave_one_group_out(rows: list[dict], target: float = 0.95, key: str = "lead_score") -> list[tuple[str, float, int, int, int, int]]:
    "Per group: the threshold chosen on the other groups, then on this group (presented, right, answerable, absent presented) at that threshold."
    out = []
    for g in dict.fromkeys(r["group"] for r in rows):
        t = lowest_threshold([r for r in rows if r["group"] != g], target, key)
        held = [r for r in rows if r["group"] == g]
        pres = [r for r in held if r["presented"] and (r[key] or 0) >= t]
        out.append((g, t, len(pres), sum(r["answerable"] and r["holds"] for r in pres), sum(r["answerable"] for r in held),
                    sum(not r["answerable"] for r in pres)))
    return out

def squash(s: str) -> str: return "".join((s or "").split())

def asked_slot_fn():
    try:
        from cragrag.text.slots import asked_slot
        return lambda q: asked_slot(q).slot
    except ImportError: return None

def run_group(group: str, rows: list[dict], slot_of, fit_gate: bool = False) -> list[dict]:
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    paths = load_demo_corpus() if GROUPS[group] is None else [SHARED / f"{n}.md" for n in GROUPS[group]]
    t = time.perf_counter(); p.index(paths, progress=False)
    print(f"## {group}: {len(rows)} questions, {p.store.count()} chunks indexed in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    if fit_gate and GROUPS[group] is not None:   # as `cragrag index` does for a user's documents (the demo corpus keeps its labelled thresholds)
        cal, _ = p.fit_gate()
        print(f"   gate fitted on probes: pass ≥ {cal.pass_threshold:.3f}, refuse < {cal.abort_threshold:.3f}", file=sys.stderr)
    out = []
    for r in rows:
        t = time.perf_counter(); res = p.answer(r["question"]); ms = (time.perf_counter() - t) * 1000
        fr = getattr(res, "failure_reason", None) or (res.grounded or {}).get("failure_reason")
        where = {s.chunk_id: (s.metadata.get("doc_id"), s.metadata.get("article_id")) for s in res.sources}
        gold = {(g["doc"], g["article"]) for g in r["gold"]}
        cited = [where.get(i) for c in res.citations for i in c.supported_by_chunks]
        holds = any(squash(v) in squash(res.answer) for v in r["value"])
        row = {"id": r["id"], "group": group, "slot": r["slot"], "answerable": r["answerable"], "refused": res.is_refusal,
               "refusal_reason": res.refusal_reason, "failure_reason": fr, "holds_value": holds,
               "cited": len(cited), "cited_gold": sum(c in gold for c in cited),
               "cited_articles": len(set(cited)), "cited_gold_articles": len(set(cited) & gold), "ms": round(ms),
               "detected_slot": slot_of(r["question"]) if slot_of else None, "answer": res.answer[:300]}
        row["ok"] = (holds and not res.is_refusal and not fr) if r["answerable"] else (res.is_refusal or bool(fr))
        out.append(row)
    return out

def report(rows: list[dict]) -> dict:
    ans = [r for r in rows if r["answerable"]]; absent = [r for r in rows if not r["answerable"]]
    cite = [x for r in ans if not r["refused"] for x in [1.0] * r["cited_gold"] + [0.0] * (r["cited"] - r["cited_gold"])]
    art = [x for r in ans if not r["refused"] and "cited_articles" in r
           for x in [1.0] * r["cited_gold_articles"] + [0.0] * (r["cited_articles"] - r["cited_gold_articles"])]
    est = {"answer holds the asked value (answerable)": bootstrap_ci([float(r["ok"]) for r in ans]),
           "미확인 / refusal (absent value)": bootstrap_ci([float(r["ok"]) for r in absent]),
           "refused (answerable)": bootstrap_ci([float(r["refused"]) for r in ans]),
           "citation precision (answerable, answered)": bootstrap_ci(cite),
           "citation precision, articles (answerable, answered)": bootstrap_ci(art)}
    if any(r["detected_slot"] for r in rows):
        est["slot detection accuracy"] = bootstrap_ci([float(r["detected_slot"] == r["slot"]) for r in rows])
    return est

def read_set(name: str) -> list[dict]:
    "The rows of bench/data/<name>.jsonl."
    return [json.loads(l) for l in (ROOT / "bench" / "data" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]

def print_summary(title: str, rows: list[dict], report) -> None:
    "The title, every rate of `report(rows)` with its interval, then each group's means."
    print(title)
    for name, e in report(rows).items(): print(f"  {name:<44} {e}")
    for g in dict.fromkeys(r["group"] for r in rows):
        sub = [r for r in rows if r["group"] == g]
        print(f"  {g:<14} " + "; ".join(f"{k.split(' (')[0]} {e.mean:.2f}" for k, e in report(sub).items() if e.n))

def bench_cache(emb):
    "The benches' passage-vector cache for `emb` (bench/.cache, seeded with the bundled demo vectors) and its file."
    from cragrag.models.embedding import EmbeddingCache, bundled_cache
    path = ROOT / "bench" / ".cache" / f"embeddings-{emb.name.replace(':', '_').replace('/', '_')}.npz"
    cache = EmbeddingCache.load(path, emb.name)
    cache.vectors.update({k: v for k, v in bundled_cache(emb.name).vectors.items() if k not in cache.vectors})
    return cache, path

LAWS_FILES = ("gate_fresh2", "gate_fresh3", "gate_fresh4", "gate_fresh5")   # the gate benches' development files (gate_fresh6 stays held out)

def laws_set(corpus: Path) -> tuple[list, list[str]]:
    "The answerable questions of the gate benches' development files (`GoldenQuestion`s, ids 'file:row') and the documents under `corpus` their gold cites."
    from cragrag.evaluate.eval import GoldenQuestion
    rows = {f: [json.loads(l) for l in (ROOT / "bench" / "data" / f"{f}.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()] for f in LAWS_FILES}
    qs = [GoldenQuestion(id=f"{f}:{n}", question=r["question"], gold=r["gold"]) for f, rs in rows.items() for n, r in enumerate(rs) if r["kind"] == "answerable"]
    return qs, sorted({str(Path(corpus) / g["doc"]) for rs in rows.values() for r in rs if r["kind"] == "answerable" for g in r["gold"]})   # gold docs as written: corpus-relative paths

def add_set_args(ap) -> None:
    "The arguments of the retrieval-set benches (bench/adapter.py, bench/feedback_signals.py): which sets, and where the fire set and the corpus are."
    ap.add_argument("--sets", default="fire,bundled,laws", help="comma-separated: fire, bundled, laws")
    ap.add_argument("--eval", default=str(ROOT.parent / "shared" / "eval" / "fire_qna_dev.jsonl"), help="the fire dev set")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"), help="where the fire and laws documents are")

def retrieval_sets(args) -> list[tuple[str, list[str] | None, dict[str, list]]]:
    "(corpus name, document paths or None for the demo corpus, {set name: answerable questions}) for each set `args.sets` names: fire dev over the documents its gold cites, the bundled golden set (held-out and dev) on the demo corpus, the laws set."
    from cragrag.evaluate.eval import bundled_golden, load_golden
    out, wanted = [], set(args.sets.split(","))
    if "fire" in wanted and Path(args.eval).is_file():
        rows = [json.loads(l) for l in Path(args.eval).read_text(encoding="utf-8").splitlines() if l.strip()]
        paths = sorted({str(Path(args.corpus) / g["doc"]) for r in rows for g in r.get("gold", [])})
        out.append(("fire", paths, {"fire dev": [q for q in load_golden(args.eval) if q.answerable and q.gold]}))
    if "bundled" in wanted:
        out.append(("bundled", None, {f"bundled {s}": [q for q in bundled_golden(s) if q.answerable and q.gold] for s in ("heldout", "dev")}))
    if "laws" in wanted:
        qs, paths = laws_set(Path(args.corpus)); out.append(("laws", paths, {"16 laws": qs}))
    return out

def wins_losses(rows: list[dict], baseline: str, ok=lambda r: r["ok"]) -> tuple[list[str], list[str]]:
    "Question ids `ok` now and not in the `baseline` --json file (wins), and the other way round (losses)."
    base = {r["id"]: r for r in json.loads(Path(baseline).read_text()) if r.get("mode", "default") == rows[0].get("mode", "default")}
    both = [(r, base[r["id"]]) for r in rows if r["id"] in base]
    return [r["id"] for r, b in both if ok(r) and not ok(b)], [r["id"] for r, b in both if ok(b) and not ok(r)]

def main_values(a) -> None:
    "The direct-answer set: per mode and per group, with mode agreement and per-question wins and losses."
    modes = a.modes.split(",")
    by = collections.defaultdict(list)
    for r in read_set(VALUE_SETS[a.set]):
        if not a.slots or r["slot"] in a.slots: by[r["group"]].append(r)
    rows = [x for g, rs in by.items() if not a.groups or g in a.groups for x in run_values(g, rs, modes)]
    if a.json: Path(a.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    print(f"# direct answers: {len(rows) // len(modes)} questions ({sum(r['answerable'] for r in rows) // len(modes)} answerable), modes {', '.join(modes)}")
    for m in modes:
        sub = [r for r in rows if r["mode"] == m]
        print(f"## {m}")
        for name, e in value_report(sub).items(): print(f"  {name:<30} {e}")
        for g in dict.fromkeys(r["group"] for r in sub):
            print(f"  {g:<14} " + "; ".join(f"{k} {e.mean:.2f}" for k, e in value_report([r for r in sub if r["group"] == g]).items() if e.n))
    if len(modes) > 1: print(f"mode agreement (one-sentence questions): {agreement(rows, modes):.3f}")
    if a.curve:
        sub = [r for r in rows if r["mode"] == modes[0]]
        print(f"selective-answer curve ({modes[0]}): presented only when the answering article scores ≥ t")
        for t, prec, cov, n in selective_curve(sub)[::max(1, len(sub) // 40)]: print(f"  t {t:.3f}: precision {prec:.3f}, coverage {cov:.3f}, presented {n}")
        logo = leave_one_group_out(sub, a.target)
        print(f"leave-one-group-out (precision target {a.target}):")
        for g, t, n, right, n_ans, absent in logo:
            print(f"  {g:<14} t {t:.3f}: precision {right / max(n, 1):.3f} ({right}/{n}), coverage {right / max(n_ans, 1):.3f}, absent presented {absent}")
        n, right = sum(x[2] for x in logo), sum(x[3] for x in logo)
        print(f"  pooled held-out: precision {right / max(n, 1):.3f} ({right}/{n}), coverage {right / max(sum(x[4] for x in logo), 1):.3f}")
    if a.baseline:
        wins, losses = wins_losses([r for r in rows if r["mode"] == modes[0]], a.baseline)
        print(f"  against {a.baseline} ({modes[0]}): {len(wins)} wins {wins}; {len(losses)} losses {losses}")

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="heldout", help="heldout, dev, or fresh (bench/data/answer_slots_<set>.jsonl); values or fresh_values (the direct-answer sets)")
    ap.add_argument("--json", help="write the per-question rows here")
    ap.add_argument("--baseline", help="an earlier --json file: per-question wins and losses")
    ap.add_argument("--groups", nargs="*", help="only these groups")
    ap.add_argument("--fit-gate", action="store_true", help="fit the gate on probes after indexing each shared-law group, as `cragrag index` does")
    ap.add_argument("--reader", nargs="*", help="offline reader switches, e.g. lead_order=rank subject_rule=true")
    ap.add_argument("--curve", action="store_true", help="the selective-answer curve and its leave-one-group-out operating point")
    ap.add_argument("--target", type=float, default=0.95, help="the presented-answer precision the operating point must reach")
    ap.add_argument("--slots", nargs="*", help="the direct-answer sets: only questions labelled with these slots (e.g. penalty)")
    ap.add_argument("--modes", default="default", help="the direct-answer set's modes: " + ", ".join(MODES))
    a = ap.parse_args()
    for kv in a.reader or []: k, v = kv.split("="); READER[k] = {"true": True, "false": False}.get(v, float(v) if v.replace(".", "").isdigit() else v)
    if a.set in VALUE_SETS: main_values(a); sys.exit(0)
    by = collections.defaultdict(list)
    for r in read_set(f"answer_slots_{a.set}"): by[r["group"]].append(r)
    slot_of, rows = asked_slot_fn(), []
    for g, rs in by.items():
        if not a.groups or g in a.groups: rows += run_group(g, rs, slot_of, a.fit_gate)
    if a.json: Path(a.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    print_summary(f"# answers that answer: {a.set} set, {len(rows)} questions ({sum(r['answerable'] for r in rows)} answerable value questions)", rows, report)
    miss = collections.Counter(r["slot"] for r in rows if r["answerable"] and not r["ok"])
    print("  answerable misses by slot:", dict(miss.most_common()))
    if a.baseline:
        wins, losses = wins_losses(rows, a.baseline)
        print(f"  against {a.baseline}: {len(wins)} wins {wins}; {len(losses)} losses {losses}")
