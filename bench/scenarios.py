"""Sufficiency mode on legal scenario questions (facts about 갑 and 을, then a question needing 1–3 articles, often
across laws), beside plain retrieval on the same questions. Prints figures; asserts nothing.

    python bench/scenarios.py                      # dev split, every current law under ../shared/corpus/legalize-kr
    python bench/scenarios.py --split heldout      # the held-out split (run on what lands, not while tuning)
    python bench/scenarios.py --store /tmp/s       # reuse (or build once) an index folder
    python bench/scenarios.py --json out.json --baseline before.json   # per-question rows; wins and losses against a run

For each question (offline defaults, 0 LLM calls):
- plain: `retrieve(q, top_k=10)` — every gold article among its first 10 distinct articles (all@10), some gold
  article among its first 5 (any@5);
- sufficiency: `answer(q, answer_mode="sufficiency", include_ledger=True)` — every gold article in its evidence
  (the response's sources plus the graded ledger), the verdict, the latency.
Reported overall and by number of gold articles (1/2/3), with 95 % bootstrap intervals; the paired difference
sufficiency − plain on "holds every gold article"; how many of the gold articles plain retrieval misses are one or two
references away (the index's reference graph) from the articles it found. Then the out-of-corpus scenarios (bench/data/scenarios_ooc.jsonl):
how many the sufficiency mode calls UNANSWERABLE, as it should."""
import argparse, collections, json, sys, time
from pathlib import Path
import numpy as np
from cragrag.answering.pipeline import Pipeline
from cragrag.core.config import load_settings
from cragrag.evaluate.eval import bootstrap_ci, paired_diff_ci

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "scenarios.jsonl"
OOC = ROOT / "bench" / "data" / "scenarios_ooc.jsonl"    # scenarios answered by laws the corpus does not hold
CORPUS = ROOT.parent / "shared" / "corpus" / "legalize-kr"

def load_scenarios(split: str | None = None, path: Path = DATA) -> list[dict]:
    "The scenario questions of `split` (dev, heldout, or None for both)."
    rows = [json.loads(l) for l in Path(path).read_text(encoding="utf-8").splitlines() if l.strip()]
    return [r for r in rows if split in (None, r.get("split"))]

def gold_of(r: dict) -> set[tuple[str, str]]: return {(g["doc_id"], g["article_id"]) for g in r["gold"]}

def articles(sources) -> list[tuple[str, str]]:
    "Distinct (document, article) of sources, in order (restored siblings left out)."
    return list(dict.fromkeys((s.metadata.get("doc_id"), s.metadata.get("article_id")) for s in sources
                              if not (s.metadata or {}).get("sibling_of") and s.metadata.get("article_id")))

def evidence_articles(res, doc_ids: dict[str, str]) -> set[tuple[str, str]]:
    "The articles of a sufficiency answer's evidence: its sources and every graded ledger item (`doc_ids`: title → doc_id)."
    ids = {(s.metadata.get("doc_id"), s.metadata.get("article_id")) for s in res.sources}
    return ids | {(doc_ids.get(e["doc_title"]), e["article_id"]) for e in res.evidence or ()}

def open_pipeline(store: str | None) -> Pipeline:
    "A pipeline over every current law (indexed once into `store` when given and empty, its gate fitted on probes as `cragrag index` fits it)."
    p = Pipeline(load_settings(qdrant_path=store or ":memory:", trace_enabled=False))
    if not p.store.exists() or p.store.count() == 0:
        t = time.perf_counter(); p.index(sorted(str(x) for x in CORPUS.glob("*.md")), progress=False)
        cal, _ = p.fit_gate()   # as `cragrag index` does: the gate (and a scenario's relevance line) from the index's own probes
        print(f"indexed {p.store.count()} chunks in {time.perf_counter() - t:.0f} s; gate {p.gate_source}: pass {p.gate_settings.crag_score_threshold}, refuse {p.gate_settings.crag_abort_threshold}", flush=True)
    return p

def run(p: Pipeline, rows: list[dict]) -> list[dict]:
    "One row per question: plain retrieval's and the sufficiency mode's evidence, verdict and latency."
    out, doc_ids = [], {m.get("doc_title"): m.get("doc_id") for _, m in p.store.scroll(fields=["doc_title", "doc_id"])}
    g = p.reference_graph()
    near = lambda keys: {k for a in keys for k in g.neighbours(a)}
    p.answer("보험계약은 언제 성립하나요?", answer_mode="sufficiency")   # warm
    for r in rows:
        gold = gold_of(r)
        arts = articles(p.retrieve(r["question"], top_k=10).sources)
        t = time.perf_counter(); res = p.answer(r["question"], answer_mode="sufficiency", include_ledger=True)
        ms = (time.perf_counter() - t) * 1000
        ev, s = evidence_articles(res, doc_ids), res.sufficiency or {}
        missed, hop1 = gold - set(arts[:10]), near(arts[:10])   # gold articles plain retrieval misses: one or two references from what it found?
        out.append({"id": r["id"], "n_gold": len(gold), "cross_law": r.get("cross_law", False),
                    "missed": len(missed), "hop1": len(missed & hop1), "hop2": len(missed & (hop1 | near(hop1))),
                    "plain_all10": gold <= set(arts[:10]), "plain_any5": bool(gold & set(arts[:5])),
                    "suff_all": gold <= ev, "suff_found": len(gold & ev), "verdict": s.get("verdict") or ("REFUSED:" + str(res.refusal_reason)),
                    "refusal": res.refusal_reason, "ms": round(ms), "evidence": len(ev)})
    return out

def report(rows: list[dict], label: str):
    "Figures overall and by number of gold articles, with intervals."
    print(f"\n## {label}: {len(rows)} questions")
    groups = [("all", rows)] + [(f"{k} gold", [r for r in rows if r["n_gold"] == k]) for k in (1, 2, 3)] + [("cross-law", [r for r in rows if r["cross_law"]])]
    print(f"{'':<10} {'n':>3}  {'plain all@10':<22} {'plain any@5':<22} {'sufficiency holds all':<22} {'suff − plain (paired)':<24}")
    for name, rs in groups:
        if not rs: continue
        f = lambda k: bootstrap_ci([float(r[k]) for r in rs])
        d = paired_diff_ci([float(r["plain_all10"]) for r in rs], [float(r["suff_all"]) for r in rs])
        print(f"{name:<10} {len(rs):>3}  {str(f('plain_all10')):<22} {str(f('plain_any5')):<22} {str(f('suff_all')):<22} {str(d):<24}")
    v = collections.Counter(r["verdict"] for r in rows)
    print("verdicts:", ", ".join(f"{k} {n} ({n / len(rows):.0%})" for k, n in v.most_common()))
    m, h1, h2 = (sum(r[k] for r in rows) for k in ("missed", "hop1", "hop2"))
    print(f"gold articles plain retrieval misses: {m}; one reference from its first 10 articles: {h1}; within two: {h2}")
    ms = [r["ms"] for r in rows]
    print(f"sufficiency latency p50 {np.percentile(ms, 50):.0f} ms, p95 {np.percentile(ms, 95):.0f} ms, max {max(ms)} ms; LLM calls 0 (offline)")

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", help="dev, heldout or all")
    ap.add_argument("--store", help="an index folder to reuse (built once when empty)")
    ap.add_argument("--ids", nargs="*", help="only these question ids")
    ap.add_argument("--json", help="write the per-question rows here")
    ap.add_argument("--baseline", help="an earlier --json file: per-question wins and losses on 'holds every gold article'")
    a = ap.parse_args()
    if not CORPUS.exists(): sys.exit(f"{CORPUS} not found: the scenario bench needs ../shared/corpus")
    rows = load_scenarios(None if a.split == "all" else a.split)
    if a.ids: rows = [r for r in rows if r["id"] in a.ids]
    p = open_pipeline(a.store)
    out = run(p, rows)
    report(out, f"scenarios ({a.split})")
    if not a.ids:
        v = collections.Counter((p.answer(r["question"], answer_mode="sufficiency").sufficiency or {}).get("verdict", "REFUSED") for r in load_scenarios(None, OOC))
        print(f"\nout-of-corpus scenarios ({sum(v.values())}): " + ", ".join(f"{k} {n}" for k, n in v.most_common()))
    if a.json: Path(a.json).write_text(json.dumps(out, ensure_ascii=False, indent=1))
    if a.baseline:
        base = {r["id"]: r for r in json.loads(Path(a.baseline).read_text())}
        won = [r["id"] for r in out if r["id"] in base and r["suff_all"] and not base[r["id"]]["suff_all"]]
        lost = [r["id"] for r in out if r["id"] in base and base[r["id"]]["suff_all"] and not r["suff_all"]]
        print(f"against {a.baseline}: won {len(won)} {won}, lost {len(lost)} {lost}")
