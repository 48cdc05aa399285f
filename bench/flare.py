"""FLARE (active retrieval on low-confidence sentences) on the bundled corpus, in both modes. Prints figures; asserts nothing.

    python bench/flare.py

Each question has a scripted first draft that is wrong in one sentence (a wrong period, amount or article) —
`cragrag.testing.flare_replies`: in logprobs mode the wrong span's tokens are unlikely, in markers mode the model
writes [LOW_CONFIDENCE: …] after it. The scripted server computes each replacement from the evidence it is given
(numbers and article set right by the best-matching unit), as a careful model would. The search function is the
pipeline's (`p.search(q, classify_query(q), 5)`). Reported per mode: extra LLM calls and extra retrievals per answer,
unsupported claims and risk levels (`verify_answer`) of the draft (against its own sources) and of the FLARE answer
(against its sources), how many answers were corrected (the gold span present, the wrong one gone), and latency."""
import collections, statistics, time
from cragrag.generate.flare import FlareBudget, flare_generate
from cragrag.models.llm import CallLog, OpenAICompatibleLLM
from cragrag.answering.pipeline import Pipeline
from cragrag.retrieval.routing import classify_query
from cragrag.testing.flare_replies import FlareDraft, flare_responder
from cragrag.testing.scripted import ScriptedLLMServer
from cragrag.check.verify import verify_answer

DRAFTS = [
    FlareDraft("보험금청구권의 소멸시효는 몇 년인가요?",
               "「상법」 제662조에 따르면 보험금청구권은 5년간 행사하지 아니하면 시효의 완성으로 소멸합니다. 보험료청구권은 2년간 행사하지 아니하면 소멸합니다.",
               "5년간", "보험금청구권 소멸시효 기간", "3년간"),
    FlareDraft("15세 미만자를 피보험자로 한 사망보험은 유효한가요?",
               "15세미만자의 사망을 보험사고로 한 보험계약은 무효입니다 (근거: 「상법」 제739조). 다만 심신박약자가 의사능력이 있으면 그러하지 아니합니다.",
               "제739조", "15세미만자 사망보험 무효 조항", "제732조"),
    FlareDraft("청약과 함께 보험료를 받은 보험사는 며칠 안에 승낙 여부를 통지해야 하나요?",
               "보험자가 청약과 함께 보험료 상당액의 전부 또는 일부를 받은 때에는 다른 약정이 없으면 10일내에 낙부의 통지를 발송하여야 합니다 (「상법」 제638조의2). 그 기간 안에 통지하지 않으면 승낙한 것으로 봅니다.",
               "10일내", "낙부 통지 기간", "30일내"),
    FlareDraft("고지의무를 위반하면 언제까지 계약을 해지할 수 있나요?",
               "보험자는 고지의무 위반 사실을 안 날로부터 1월내에, 계약을 체결한 날로부터 5년내에 한하여 계약을 해지할 수 있습니다 (「상법」 제651조).",
               "5년내", "고지의무 위반 해지 제척기간", "3년내"),
    FlareDraft("약관 설명을 안 들었으면 언제까지 계약을 취소할 수 있나요?",
               "보험자가 약관의 중요한 내용을 설명하지 않았다면 보험계약자는 보험계약이 성립한 날부터 1개월 이내에 그 계약을 취소할 수 있습니다 (「상법」 제638조의3 제2항).",
               "1개월", "약관 설명의무 위반 취소 기간", "3개월"),
    FlareDraft("보험계약자의 고의로 위험이 현저하게 증가하면 보험자는 언제까지 계약을 해지할 수 있나요?",
               "보험자는 그 사실을 안 날부터 3월내에 보험료의 증액을 청구하거나 계약을 해지할 수 있습니다 (「상법」 제653조).",
               "3월내", "위험 증가 해지 기간", "1월내"),
    FlareDraft("모집종사자가 기존 계약을 부당하게 소멸시켰으면 언제까지 부활을 청구할 수 있나요?",
               "보험계약자는 그 보험계약이 소멸한 날부터 1년 이내에 소멸된 보험계약의 부활을 청구하고 새로운 보험계약은 취소할 수 있습니다 (「보험업법」 제97조 제4항).",
               "1년", "부당 소멸 보험계약 부활 청구 기간", "6개월"),
    FlareDraft("보험사기이득액이 50억원 이상이면 어떤 처벌을 받나요?",
               "보험사기이득액이 50억원 이상일 때에는 무기 또는 10년 이상의 징역으로 가중처벌합니다 (「보험사기방지 특별법」 제11조).",
               "10년", "보험사기 가중처벌 징역", "5년"),
    FlareDraft("소액단기전문보험회사는 자본금이 얼마 이상이어야 하나요?",
               "소액단기전문보험회사는 20억원 이상의 범위에서 대통령령으로 정하는 금액 이상의 자본금 또는 기금을 납입하여야 합니다 (「보험업법」 제9조 제2항).",
               "20억원", "소액단기전문보험회사 자본금", "10억원"),
    FlareDraft("보험금액이 정해지면 며칠 안에 지급해야 하나요?",
               "약정기간이 없으면 보험자는 지급할 보험금액을 정하고 그 정하여진 날부터 30일내에 보험금액을 지급하여야 합니다 (「상법」 제658조).",
               "30일내", "보험금액 지급 기간", "10일내"),
    FlareDraft("최초 보험료를 내지 않으면 계약은 어떻게 되나요?",
               "보험계약자가 최초의 보험료를 지급하지 아니하면 다른 약정이 없는 한 계약성립후 3월이 경과하면 그 계약은 해제된 것으로 봅니다 (「상법」 제650조 제1항).",
               "3월이", "최초 보험료 미지급 해제", "2월이"),
    FlareDraft("해지된 보험계약의 부활은 어떻게 청구하나요?",
               "보험계약자는 일정한 기간내에 연체보험료에 약정이자를 붙여 보험자에게 지급하고 그 계약의 부활을 청구할 수 있습니다 (「상법」 제651조의2).",
               "제651조의2", "보험계약 부활 청구 조항", "제650조의2"),
    FlareDraft("보험회사가 보험업을 시작하려면 자본금이 얼마 이상이어야 하나요?",
               "보험회사는 500억원 이상의 자본금 또는 기금을 납입함으로써 보험업을 시작할 수 있습니다 (「보험업법」 제9조 제1항).",
               "500억원", "보험회사 최저 자본금", "300억원"),
]

def _unsupported(v) -> int: return sum(c.verifiable and not c.supported for c in v.claims)

def run(p: Pipeline | None = None, drafts=DRAFTS, threshold: float = 0.5, budget: FlareBudget = FlareBudget()) -> dict:
    "Both modes over `drafts`: per-mode means and counts, and one row per question and mode."
    if p is None: p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    search = lambda q: p.search(q, classify_query(q), 5)
    rows = []
    with ScriptedLLMServer(responder=flare_responder(drafts)) as srv:
        for mode in ("logprobs", "markers"):
            for d in drafts:
                llm, log = OpenAICompatibleLLM(base_url=srv.url, model="scripted", api_key="k", max_retries=0), CallLog()
                srcs = search(d.question)
                t = time.perf_counter()
                r = flare_generate(d.question, classify_query(d.question).query_type, srcs, llm, search, threshold, budget, log, mode=mode)
                ms = (time.perf_counter() - t) * 1000
                vb, va = verify_answer(r.draft, srcs), verify_answer(r.answer, r.sources)
                rows.append({"mode": mode, "question": d.question, "extra_llm_calls": r.extra_llm_calls, "extra_retrievals": r.extra_retrievals,
                             "risk_before": vb.risk_level.value, "risk_after": va.risk_level.value,
                             "unsupported_before": _unsupported(vb), "unsupported_after": _unsupported(va),
                             "corrected": d.gold in r.answer and d.wrong not in r.answer, "actions": [x.action for x in r.records],
                             "llm_calls": len(log), "ms": round(ms)})
    out = {"n": len(drafts), "rows": rows}
    for mode in ("logprobs", "markers"):
        m = [x for x in rows if x["mode"] == mode]
        out[mode] = {"extra_llm_calls_per_answer": statistics.mean(x["extra_llm_calls"] for x in m),
                     "extra_retrievals_per_answer": statistics.mean(x["extra_retrievals"] for x in m),
                     "unsupported_claims_before": sum(x["unsupported_before"] for x in m),
                     "unsupported_claims_after": sum(x["unsupported_after"] for x in m),
                     "risk_before": dict(collections.Counter(x["risk_before"] for x in m)),
                     "risk_after": dict(collections.Counter(x["risk_after"] for x in m)),
                     "wrong_draft_passed_verify": sum(x["risk_before"] == "pass" for x in m),
                     "corrected": sum(x["corrected"] for x in m),
                     "p50_ms": statistics.median(x["ms"] for x in m)}
    return out

def report(res: dict, seconds: float | None = None) -> None:
    "Print `run()`'s result."
    print(f"FLARE on {res['n']} questions with a wrong first draft (bundled corpus, scripted server)" + (f", {seconds:.0f} s" if seconds else ""))
    for mode in ("logprobs", "markers"):
        print(f"\n{mode}:")
        for k, v in res[mode].items(): print(f"  {k:<30} {v}")
    print("\nper question (logprobs mode):")
    for x in res["rows"]:
        if x["mode"] == "logprobs":
            print(f"  {x['risk_before']:>9} → {x['risk_after']:<9} corrected={x['corrected']!s:<5} {x['actions']} {x['question']}")

if __name__ == "__main__":
    t = time.perf_counter(); res = run(); report(res, time.perf_counter() - t)
