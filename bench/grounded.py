"""Grounded answering and post-processing, in one run. Prints figures; asserts nothing.

    python bench/grounded.py                 # everything (multi-query on the fire dev set needs ../shared)
    python bench/grounded.py --quick         # skip the fire dev set in the multi-query part

1. The answer contract with a model that sometimes breaks its JSON: a scripted OpenAI-compatible server writes a
   correct contract from the context it is given, but 30% of its replies (seeded) are broken — truncated JSON,
   a missing field, a source number that does not exist. Reported: first replies that validate, answers whose
   contract validated after the one repair, explicit failures, replies passed through unvalidated (must be 0),
   model calls per answer.
2. The design's verification questions on the bundled corpus, offline: numeric questions whose number is absent
   (must end in 미확인, no estimate — or in 문서 없음 when the gate finds nothing at all), questions with no evidence
   (must end in 문서 없음), and answerable numeric questions (must be answered: the check is not a refusal machine).
3. Multi-query recall gain and cost (bench/multiquery.py): single vs multi-query on the held-out vocabulary-gap
   questions and the fire dev set.
4. FLARE (bench/flare.py): extra calls and retrievals per answer, unsupported claims before/after.
5. Guardrails (bench/guardrails.py): the false-positive rate on the whole bundled corpus and ../shared/corpus, and
   precision/recall on crafted answers.
6. The three-way branch: decisions on internal / external / refused / private questions, with an intranet folder as
   the external source (no network).
7. Latency of `answer()` (offline), the switches interleaved per question: everything off, the default (guardrails
   only), grounded_answer, multi_query, three_way — p50/p95 and the paired ratio against everything off."""
import argparse, importlib.util, json, random, re, sys, tempfile, time
from pathlib import Path
import numpy as np
from cragrag.generate.grounded import GroundedReply
from cragrag.answering.pipeline import Pipeline
from cragrag.testing.scripted import Reply, ScriptedLLMServer

ROOT = Path(__file__).resolve().parents[1]

def _bench(name):
    "A sibling bench script as a module (its `run()` is the measurement)."
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    m = importlib.util.module_from_spec(spec); sys.argv = [sys.argv[0]]; spec.loader.exec_module(m)
    return m

# ------------------------------------------------------------------ 1. format validity
_SRC = re.compile(r"^\[(\d+)\] [^\n]*\n(.*?)(?=^\[\d+\] |\Z)", re.S | re.M)

def contract_responder(break_rate: float = 0.3, seed: int = 0):
    "A model that writes a valid contract from source [1] of its context, but breaks `break_rate` of its replies."
    rng, stats = random.Random(seed), {"replies": 0, "broken": 0}
    def respond(body):
        stats["replies"] += 1
        user = next(m["content"] for m in body["messages"] if m["role"] == "user" and "[컨텍스트]" in m["content"])
        srcs = _SRC.findall(user.replace("</자료>", ""))
        first = (srcs[0][1].strip().split("\n")[0] if srcs else "")[:200] or "근거 없음"
        ok = {"direct_answer": first, "claims": [{"text": first, "sources": [1]}], "summaries": [{"source": 1, "summary": first[:60]}],
              "failure_reason": None if srcs else "문서 없음"}
        if rng.random() >= break_rate: return json.dumps(ok, ensure_ascii=False)
        stats["broken"] += 1
        kind = rng.choice(["truncated", "missing", "bad_source"])
        if kind == "truncated": return json.dumps(ok, ensure_ascii=False)[:40]
        if kind == "missing": return json.dumps({k: v for k, v in ok.items() if k != "claims"}, ensure_ascii=False)
        return json.dumps({**ok, "claims": [{"text": first, "sources": [99]}]}, ensure_ascii=False)
    return respond, stats

def format_validity(p, questions, break_rate=0.3) -> dict:
    respond, stats = contract_responder(break_rate)
    out = {"answers": 0, "first_valid": 0, "valid_after_repair": 0, "explicit_failures": 0, "passed_through": 0, "calls": 0}
    with ScriptedLLMServer(responder=respond) as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x",
                     llm_max_retries=0, rewriter="glossary", trace_enabled=False)   # the model writes contracts only
        for q in questions:
            a = m.answer(q, grounded_answer=True)
            g = a.grounded
            if g is None or "attempts" not in g or g.get("attempts", 0) == 0: continue   # refused before generation
            out["answers"] += 1; out["calls"] += g["attempts"]
            out["first_valid"] += g["format_valid"] and g["attempts"] == 1
            out["valid_after_repair"] += g["format_valid"]
            out["explicit_failures"] += not g["format_valid"]
            out["passed_through"] += (not g["format_valid"]) and not a.is_refusal
    out.update(replies=stats["replies"], broken_replies=stats["broken"])
    return out

# ------------------------------------------------------------------ 2. verification questions
ABSENT_NUMBER = ["보험설계사의 모집수수료율은 몇 퍼센트인가요?", "국내 보험회사는 몇 개인가요?", "작년 보험사기 적발 금액은 얼마인가요?",
                 "보험회사 임원의 평균 연봉은 얼마인가요?", "보험업계 종사자는 몇 명인가요?", "실손보험 평균 보험료는 월 얼마인가요?"]
NO_EVIDENCE = ["회사 휴가 규정은 며칠인가요?", "투자사 수는 몇 곳인가요?", "피자 배달 지연 보상은 얼마인가요?",
               "오늘 반도체 업계 주요 뉴스", "주차장 방문객 무료 시간은?"]
ANSWERABLE_NUMBER = ["보험금청구권의 소멸시효는 몇 년인가요?", "보험사기죄의 벌금은 얼마인가요?",
                     "보험자는 청약을 받은 날부터 며칠 내에 낙부의 통지를 해야 하나요?", "보험료청구권의 소멸시효 기간은?"]

def verification_questions(p) -> dict:
    rows = {}
    for name, qs, want in [("absent_number", ABSENT_NUMBER, "미확인"), ("no_evidence", NO_EVIDENCE, "문서 없음"), ("answerable_number", ANSWERABLE_NUMBER, None)]:
        got = []
        for q in qs:
            a = p.answer(q, grounded_answer=True)
            got.append((q, a.grounded["failure_reason"] if a.grounded else "?", a.answer[:80]))
        rows[name] = {"want": want, "ok": sum(r[1] == want for r in got), "n": len(qs), "rows": got,
                      "explicit": sum(r[1] in ("미확인", "문서 없음") for r in got)}
    return rows

# ------------------------------------------------------------------ 6. three-way decisions
INTRANET = {"사내_주차규정.md": "# 사내 주차규정\n\n제1조(방문객 주차) 방문객 주차는 2시간까지 무료로 한다.\n\n제2조(임직원) 임직원은 등록한 차량 1대에 한하여 주차할 수 있다.\n",
            "사내_청약철회_안내.md": "# 청약 철회 안내\n\n제1조(청약 철회 기간) 보험계약자는 보험증권을 받은 날부터 15일 이내에 청약을 철회할 수 있다.\n",
            "사내_휴가규정.md": "# 사내 휴가규정\n\n제1조(연차) 1년간 80퍼센트 이상 출근한 직원에게 15일의 유급휴가를 준다.\n"}
THREE_WAY = [("보험계약은 언제 성립하나요?", "use_retrieval"), ("고지의무 위반 시 계약 해지", "use_retrieval"),
             ("청약 철회는 며칠 이내에 할 수 있나요?", "combine"),
             ("방문객 주차는 몇 시간 무료인가요?", "external_only"), ("사내 연차 휴가는 며칠인가요?", "external_only"),
             ("오늘 반도체 업계 주요 뉴스", "refuse"), ("방문객 주차 몇 시간 무료? 제 번호 010-1234-5678", "refuse")]

def three_way(p) -> dict:
    d = Path(tempfile.mkdtemp())
    for n, t in INTRANET.items(): (d / n).write_text(t, encoding="utf-8")
    tw = Pipeline(p.settings, store=p.store, crag_mode="three_way", external_paths=[d], allow_external=True, trace_enabled=False)
    rows = []
    for q, want in THREE_WAY:
        a = tw.answer(q)
        c = a.corrective or {}
        rows.append((q, want, c.get("verdict"), c.get("strategy", "refuse" if a.is_refusal else "?"), c.get("blocked"), a.is_refusal))
    return {"rows": rows, "ok": sum(r[1] == r[3] for r in rows), "n": len(rows)}

def latency(p, questions, reps: int = 3) -> dict:
    "p50/p95 ms of answer() per configuration, interleaved per question, and the median paired ratio to 'off'."
    confs = {"off": dict(guardrails=False), "default (guardrails)": {}, "grounded_answer": dict(grounded_answer=True),
             "multi_query": dict(multi_query=True), "three_way": dict(crag_mode="three_way")}
    ms = {k: [] for k in confs}
    for q in questions: p.answer(q)                                   # warm caches once
    for _ in range(reps):
        for q in questions:
            for k, kw in confs.items():
                t = time.perf_counter(); p.answer(q, **kw); ms[k].append((time.perf_counter() - t) * 1000)
    off = np.array(ms["off"])
    return {k: {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95)), "ratio_median": float(np.median(np.array(v) / off))}
            for k, v in ms.items()}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the fire dev set in the multi-query part")
    a = ap.parse_args()
    t0 = time.perf_counter()
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    rows = [json.loads(l) for l in (ROOT / "cragrag" / "data" / "golden_bundled.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    qs = [r["question"] for r in rows if r["answerable"]][:80]     # the bundled golden set's answerable questions

    print(f"## 1. The answer contract with a model that breaks 30% of its JSON replies ({len(qs)} answerable golden questions)")
    f = format_validity(p, qs)
    n = max(f["answers"], 1)
    print(f"answers {f['answers']}, model replies {f['replies']} ({f['broken_replies']} broken)")
    print(f"  first reply valid {f['first_valid']}/{n} ({f['first_valid'] / n:.0%}); contract valid after the one repair "
          f"{f['valid_after_repair']}/{n} ({f['valid_after_repair'] / n:.0%}); explicit failures {f['explicit_failures']}; "
          f"passed through unvalidated {f['passed_through']}; model calls per answer {f['calls'] / n:.2f}")

    print("\n## 2. The design's verification questions (offline generator)")
    for name, r in verification_questions(p).items():
        print(f"{name}: {r['ok']}/{r['n']} end as {r['want'] or 'answered'}" + (f" ({r['explicit']}/{r['n']} explicit failures, no estimate)" if r["want"] else ""))
        for q, got, text in r["rows"]: print(f"   {got or '(answered)':8s} {q}  →  {text!r}")

    print("\n## 3. Multi-query (bench/multiquery.py)")
    mq = _bench("multiquery")
    try: mq.run(**({"fire": False} if a.quick else {}))
    except TypeError: mq.run()

    print("\n## 4. FLARE (bench/flare.py)")
    fl = _bench("flare"); r = fl.run(p)
    fl.report(r)

    print("\n## 5. Guardrails (bench/guardrails.py)")
    gr = _bench("guardrails"); gr._report(gr.run())

    print("\n## 6. Three-way CRAG decisions (external source: an intranet folder)")
    t = three_way(p)
    for q, want, verdict, strategy, blocked, refused in t["rows"]:
        print(f"  {'ok ' if want == strategy else 'BAD'} want {want:13s} got {strategy:13s} verdict {verdict}  blocked={blocked}  {q}")
    print(f"{t['ok']}/{t['n']} as expected")

    print("\n## 7. answer() latency per switch (offline, interleaved, 3 rounds over 40 golden questions)")
    for k, v in latency(p, [r["question"] for r in rows][:40]).items():
        print(f"  {k:22s} p50 {v['p50']:7.1f} ms  p95 {v['p95']:7.1f} ms  median ratio to off {v['ratio_median']:.2f}")
    print(f"\n({time.perf_counter() - t0:.0f} s)")

if __name__ == "__main__":
    main()
