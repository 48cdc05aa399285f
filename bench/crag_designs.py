"""How `bench/crag.py` and the course notebook (`nbs/course/39_crag_course.ipynb`) measure a CRAG design on a question set:
the question set, one comparable row per question, and the summary figures.

`cragrag/data/crag_questions.jsonl` holds 32 questions about the bundled corpus in three kinds: answerable (12, with
their gold articles), vocabulary gap (9 colloquial questions whose answer is in the corpus under statute words) and
out of corpus (11). `design_row` runs one question through either design (the score gate's `Pipeline` or a
`JudgeCRAG`) and returns what the comparison needs: refused or not (and why), LLM calls, retries, latency, and
whether an answered question's sources include a gold article. `summarize_rows` aggregates: pass rate per kind,
refusal precision and recall (a refusal is *right* for an out-of-corpus question), mean LLM calls, latency.

These helpers measure; they are not part of the library, so they live with the benchmark."""
import json
from importlib.resources import files
from pathlib import Path
from cragrag.course.judge import JudgeCRAG

def load_question_set(path=None) -> list[dict]:
    "The bundled CRAG question set (question, kind, gold) or a JSONL file of the same shape."
    p = Path(path) if path else Path(str(files("cragrag") / "data" / "crag_questions.jsonl"))
    rows = [json.loads(l) for l in p.read_text(encoding="utf-8").splitlines() if l.strip()]
    for i, r in enumerate(rows, 1):
        if not {"question", "kind"} <= set(r): raise ValueError(f"{p}:{i}: each line needs 'question' and 'kind'")
    return rows

def _gold_hit(sources, gold):
    if not gold: return None
    arts = {f"{s.metadata.get('doc_id')}:{s.metadata.get('article_id')}" for s in sources}
    return bool(arts & set(gold))

def design_row(design, item: dict) -> dict:
    "Run one question-set item through a `Pipeline` (score gate) or a `JudgeCRAG`; the comparable facts."
    q = item["question"]
    if isinstance(design, JudgeCRAG):
        r = design.run(q)
        calls, refused, reason, retries, ms, sources = len(r.llm_calls), r.is_refusal, r.refusal_reason, r.retries, r.elapsed_ms, r.sources
    else:
        res = design.answer(q); tr = design.last_trace or {}
        calls, refused, reason, retries, ms, sources = len(tr.get("llm_calls") or []), res.is_refusal, res.refusal_reason, res.crag_retries, res.elapsed_ms, res.sources
    return {"question": q, "kind": item["kind"], "refused": refused, "reason": reason, "llm_calls": calls,
            "retries": retries, "ms": ms, "gold_hit": None if refused else _gold_hit(sources, item.get("gold"))}

def _share(n, of, digits=3):
    return round(n / of, digits) if of else None

def summarize_rows(rows: list[dict]) -> dict:
    "Pass rate per kind, refusal precision/recall (out_of_corpus = should refuse), LLM calls and latency."
    by_kind = {k: [r for r in rows if r["kind"] == k] for k in sorted({r["kind"] for r in rows})}
    refused, should = [r for r in rows if r["refused"]], by_kind.get("out_of_corpus", [])
    right = sum(1 for r in refused if r["kind"] == "out_of_corpus")
    ms, hits = sorted(r["ms"] for r in rows), [r["gold_hit"] for r in rows if r["gold_hit"] is not None]
    mean = lambda key, rs: round(sum(r[key] for r in rs) / max(1, len(rs)), 2)
    return {"n": len(rows), "pass_rate": {k: _share(sum(1 for r in rs if not r["refused"]), len(rs)) for k, rs in by_kind.items()},
            "refusal_precision": _share(right, len(refused)), "refusal_recall": _share(right, len(should)),
            "answered_with_gold": _share(sum(hits), len(hits)),
            "llm_calls_mean": mean("llm_calls", rows), "llm_calls_out_of_corpus": mean("llm_calls", should),
            "retries_mean": mean("retries", rows), "latency_ms_p50": ms[len(ms) // 2], "latency_ms_mean": round(sum(ms) / len(ms))}
