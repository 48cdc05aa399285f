"""Routing over a user's own laws: is an article lookup read as one, and does the answer quote the article asked for?
Prints figures; asserts nothing.

    python bench/routing.py                              # every group of bench/data/routing_fresh.jsonl
    python bench/routing.py --json out.json --baseline earlier.json
    python bench/routing.py --set fresh2                 # bench/data/routing_fresh2.jsonl, the held-out reading

bench/data/routing_fresh.jsonl holds 84 questions over six groups of shared laws and 고시 (14 each: 8 article lookups
that name long law titles and article headings in varied spacing, 6 questions of other types), written by someone who
read only the laws, never cragrag. Each group is indexed fresh in memory with the offline defaults and its gate fitted on
probes (as `cragrag index` does), then every question goes through `Pipeline.retrieve` and `Pipeline.answer`:
- route: the query type the pipeline's router gives, against the expected one (the base router's too, for comparison);
- found@1 / found@5: a gold article is the first / among the first five distinct articles `retrieve` returns;
- quoted (lookups): the answer opens with a gold article's citation, its law's title and its number;
- fused: for lookups, a gold article is among the fused candidates of the lookup search (before reranking).
bench/data/routing_fresh2.jsonl (60 questions, 10 per group: 6 lookups, some naming two articles or none of a title,
4 of other types) was written the same way after the router was built on the first set, and read once.
Rates come with 95 % bootstrap intervals."""
import argparse, collections, json, sys, time
from pathlib import Path
from cragrag.answering.pipeline import Pipeline
from cragrag.evaluate.eval import bootstrap_ci
from cragrag.retrieval.routing import Router, classify_query
from cragrag.retrieval.search import candidate_k, search_rrf_only
from cragrag.core.schema import SearchStrategy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from answers import GROUPS, SHARED, print_summary, read_set, wins_losses  # noqa: E402
REGULATE = SHARED.parent / "regulate-kr"
GROUPS = {**GROUPS, "commercial": ["상법_법률"],
          "firecode": ["공동주택의_화재안전성능기준(NFPC_608)_고시", "스프링클러설비의_화재안전성능기준(NFPC_103)_고시",
                       "옥내소화전설비의_화재안전성능기준(NFPC_102)_고시", "소방시설의_내진설계_기준_고시"]}

def path(name: str) -> Path: return SHARED / f"{name}.md" if (SHARED / f"{name}.md").exists() else REGULATE / f"{name}.md"

def articles(sources) -> list[tuple]:
    out = []
    for s in sources:
        k = (s.metadata.get("doc_id"), s.metadata.get("article_id"))
        if k not in out: out.append(k)
    return out

def run_group(group: str, rows: list[dict]) -> list[dict]:
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    t = time.perf_counter(); p.index([path(n) for n in GROUPS[group]], progress=False); p.fit_gate()
    print(f"## {group}: {len(rows)} questions, {p.store.count()} chunks, ready in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    router = p.router() if hasattr(p, "router") else Router()
    out = []
    for r in rows:
        q, gold = r["question"], {(g["doc"], g["article"]) for g in r["gold"]}
        arts = articles(p.retrieve(q, top_k=5).sources)
        res = p.answer(q); head = res.answer.splitlines()[0] if res.answer else ""
        titles = {s.metadata.get("doc_id"): s.metadata.get("doc_title") for s in res.sources}
        quoted = any(a in head and f"「{titles.get(d) or ''}」" in head for d, a in gold)
        fused = None
        if r["type"] == "structured_lookup":
            hits = search_rrf_only(p.search_context(), q, SearchStrategy.BM25_HEAVY, candidate_k(p.settings, 5))
            fused = bool(gold & {h.key for h in hits})
        out.append({"id": r["id"], "group": group, "type": r["type"], "route": classify_query(q, router).query_type.value,
                    "base_route": classify_query(q).query_type.value, "found1": bool(arts) and arts[0] in gold,
                    "found5": bool(gold & set(arts[:5])), "quoted": quoted, "refused": res.is_refusal, "fused": fused,
                    "answer": res.answer[:160]})
    return out

def report(rows: list[dict]) -> dict:
    look = [r for r in rows if r["type"] == "structured_lookup"]
    return {"route right (all)": bootstrap_ci([float(r["route"] == r["type"]) for r in rows]),
            "base router right (all)": bootstrap_ci([float(r["base_route"] == r["type"]) for r in rows]),
            "lookup read as lookup": bootstrap_ci([float(r["route"] == "structured_lookup") for r in look]),
            "non-lookup read as lookup": bootstrap_ci([float(r["route"] == "structured_lookup") for r in rows if r["type"] != "structured_lookup"]),
            "found@1 (all)": bootstrap_ci([float(r["found1"]) for r in rows]),
            "found@5 (all)": bootstrap_ci([float(r["found5"]) for r in rows]),
            "answer quotes the gold article (lookups)": bootstrap_ci([float(r["quoted"]) for r in look]),
            "gold among fused candidates (lookups)": bootstrap_ci([float(bool(r["fused"])) for r in look])}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the per-question rows here")
    ap.add_argument("--baseline", help="an earlier --json file: per-question wins and losses")
    ap.add_argument("--groups", nargs="*", help="only these groups")
    ap.add_argument("--set", default="fresh", choices=["fresh", "fresh2"], help="bench/data/routing_<set>.jsonl")
    a = ap.parse_args()
    by = collections.defaultdict(list)
    for r in read_set(f"routing_{a.set}"):
        if not a.groups or r["group"] in a.groups: by[r["group"]].append(r)
    rows = [x for g, rs in by.items() for x in run_group(g, rs)]
    if a.json: Path(a.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    print_summary(f"# routing over a user's laws: {len(rows)} questions ({sum(r['type'] == 'structured_lookup' for r in rows)} lookups)", rows, report)
    for r in rows:
        print(f"  {'✓' if r['route'] == r['type'] else '✗'}{'q' if r['quoted'] else ' '} {r['id']:<16} {r['type']:<17} → {r['route']:<17} "
              f"@1 {int(r['found1'])} @5 {int(r['found5'])}  {r['answer'][:70]!r}")
    if a.baseline:
        for key in ("quoted", "found5", "found1"):
            wins, losses = wins_losses(rows, a.baseline, lambda r: r[key])
            print(f"  {key} against {a.baseline}: {len(wins)} wins {wins}; {len(losses)} losses {losses}")
        wins, losses = wins_losses(rows, a.baseline, lambda r: r["route"] == r["type"])
        print(f"  route against {a.baseline}: {len(wins)} wins {wins}; {len(losses)} losses {losses}")
