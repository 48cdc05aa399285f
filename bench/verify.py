"""Self-RAG verifier: speed, and risk levels of real answers against right and wrong evidence.

1. Speed: verify_answer on 500-character answers against 5 chunks of the bundled corpus, cold (chunk parsing
   uncached) and warm, next to a naive baseline measured in the same run (is every digit run of the answer somewhere
   in the context: one regex and a set difference). Target: < 1 ms per answer.
2. Fire-safety dev set (../shared/eval/fire_qna_dev.jsonl, loaded at run time, never bundled): each agency reference
   answer verified against (a) every chunk of its gold articles and (b) the same number of chunks of another
   question's gold articles (unrelated evidence). Prints the risk-level distribution of both and what drives them.

    python bench/verify.py [--eval PATH] [--corpus DIR] [--n 2000]
"""
import argparse, json, re, statistics, time
from collections import Counter
from pathlib import Path
from cragrag.indexing.documents import chunk_document, load_demo_corpus, load_documents
from cragrag.check.verify import parse_chunk, verify_answer

root = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--eval", default=str(root.parent / "shared" / "eval" / "fire_qna_dev.jsonl"))
ap.add_argument("--corpus", default=str(root.parent / "shared" / "corpus"))
ap.add_argument("--n", type=int, default=2000, help="timed repetitions")
args = ap.parse_args()

# ---- 1. speed ---------------------------------------------------------------------------------------------------
chunks = [c for d in load_demo_corpus() for c in chunk_document(d)]
by_article = {}
for c in chunks: by_article.setdefault((c.doc_id, c.article_id), []).append(c)
groups = [cs for cs in by_article.values() if len(cs) >= 5 and any(ch.isdigit() for ch in cs[0].text)][:40]
cases = []
for cs in groups:
    five = cs[:5]
    # an answer made of the context's own sentences, with a wrong number and a foreign citation mixed in
    sents = re.split(r"(?<=다\.)\s+", " ".join(c.text for c in five))
    ans = (" ".join(sents) + " 이 경우 「상법」 제999조에 따라 30일 이내에 1억원을 지급한다.")[:500]
    cases.append((ans, five))
def naive(answer, ctx):
    have = set(re.findall(r"\d+", " ".join(c.text for c in ctx)))
    return set(re.findall(r"\d+", answer)) - have
def timed(f, reps):
    t0 = time.perf_counter()
    for i in range(reps): f(i)
    return (time.perf_counter() - t0) / reps * 1000
reps = max(args.n // len(cases), 1) * len(cases)
base = timed(lambda i: naive(*cases[i % len(cases)]), reps)
warm = timed(lambda i: verify_answer(*cases[i % len(cases)]), reps)
def cold_one(i):
    parse_chunk.cache_clear(); verify_answer(*cases[i % len(cases)])
cold = timed(cold_one, reps)
lens = [len(a) for a, _ in cases]
print(f"speed: {len(cases)} answers of {min(lens)}-{max(lens)} characters against 5 chunks each, {reps} calls")
print(f"  naive digit check (baseline)   {base:7.3f} ms/answer")
print(f"  verify_answer, warm            {warm:7.3f} ms/answer   ×{warm / base:.1f} baseline   target < 1 ms: {'met' if warm < 1 else 'missed'}")
print(f"  verify_answer, cold (no cache) {cold:7.3f} ms/answer   ×{cold / base:.1f} baseline   target < 1 ms: {'met' if cold < 1 else 'missed'}")

# ---- 2. fire-safety reference answers -------------------------------------------------------------------------------
ev = Path(args.eval)
if not ev.is_file():
    print(f"\n(no {ev}: skipping the reference-answer measurement)"); raise SystemExit(0)
rows = [json.loads(l) for l in ev.open(encoding="utf-8")]
docs = load_documents([Path(args.corpus) / d for d in sorted({g["doc"] for r in rows for g in r["gold"]})])
fire = {}
for d in docs:
    for c in chunk_document(d):
        fire.setdefault((Path(d.source).name if d.source else d.doc_id, c.article_id), []).append(c)
def gold_chunks(r):
    return [c for g in r["gold"] for c in fire.get((Path(g["doc"]).name, g["article"]), [])]
usable = [r for r in rows if gold_chunks(r) and r.get("reference_answer")]
keys = lambda r: {(Path(g["doc"]).name, g["article"]) for g in r["gold"]}
dist = {"gold": Counter(), "unrelated": Counter()}
why = {"gold": Counter(), "unrelated": Counter()}
ground = {"gold": [], "unrelated": []}
t0 = time.perf_counter()
for i, r in enumerate(usable):
    gc = gold_chunks(r)
    other = next(o for o in usable[i + 1:] + usable[:i] if not keys(o) & keys(r) and not {Path(g["doc"]).name for g in o["gold"]} & {Path(g["doc"]).name for g in r["gold"]}) \
        if any(not keys(o) & keys(r) for o in usable) else usable[(i + 1) % len(usable)]
    oc = (gold_chunks(other) * 10)[: max(len(gc), 1)]
    for name, ctx in (("gold", gc), ("unrelated", oc)):
        v = verify_answer(r["reference_answer"], ctx)
        dist[name][v.risk_level.value] += 1
        if v.groundedness is not None: ground[name].append(v.groundedness)
        if v.missing_refs: why[name]["missing ref"] += 1
        if v.hierarchy_mismatches: why[name]["hierarchy mismatch"] += 1
        for m in v.numeric_mismatches: why[name][f"{m['kind']} mismatch"] += 1
n = len(usable)
print(f"\nfire-safety dev set: {n} reference answers with gold chunks ({(time.perf_counter() - t0) * 1000 / (2 * n):.2f} ms per verification)")
levels = ["pass", "warn", "soft_fail", "hard_fail"]
print(f"{'evidence':12s} " + " ".join(f"{l:>10s}" for l in levels) + f" {'mean groundedness':>18s}  (claims with facts only)")
for name in ("gold", "unrelated"):
    g = ground[name]
    print(f"{name:12s} " + " ".join(f"{dist[name][l]:4d} {dist[name][l] / n:4.0%}" for l in levels)
          + f" {statistics.mean(g) if g else float('nan'):18.2f}  (n={len(g)})")
for name in ("gold", "unrelated"):
    print(f"  {name}: answers with ... {dict(why[name].most_common())}")
