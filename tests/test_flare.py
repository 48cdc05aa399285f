"FLARE end to end: the bundled corpus, the scripted server, both modes; a wrong period is found and set right."
import pytest
from cragrag.generate.flare import FlareBudget, flare_generate
from cragrag.models.llm import CallLog, ExtractiveLLM, OpenAICompatibleLLM
from cragrag.answering.pipeline import Pipeline
from cragrag.retrieval.routing import classify_query
from cragrag.core.schema import RiskLevel
from cragrag.testing.flare_replies import FlareDraft, flare_responder
from cragrag.testing.scripted import ScriptedLLMServer
from cragrag.check.verify import verify_answer

Q = "고지의무를 위반하면 언제까지 계약을 해지할 수 있나요?"
D = FlareDraft(Q, "보험자는 고지의무 위반 사실을 안 날로부터 1월내에, 계약을 체결한 날로부터 5년내에 한하여 계약을 해지할 수 있습니다 (「상법」 제651조). "
                  "보험자가 계약 당시 그 사실을 알았다면 해지할 수 없습니다.", "5년내", "고지의무 위반 해지 제척기간", "3년내")

@pytest.fixture(scope="module")
def p():
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    return p

@pytest.mark.parametrize("mode", ["logprobs", "markers"])
def test_flare_corrects_a_wrong_period(p, mode):
    search = lambda q: p.search(q, classify_query(q), 5)
    srcs = search(Q)
    with ScriptedLLMServer(responder=flare_responder([D])) as srv:
        llm, log = OpenAICompatibleLLM(base_url=srv.url, model="scripted", api_key="k", max_retries=0), CallLog()
        r = flare_generate(Q, classify_query(Q).query_type, srcs, llm, search, log=log, mode=mode)
    assert r.mode == mode and (r.extra_llm_calls, r.extra_retrievals) == (1, 1)
    assert [c.purpose for c in log] == ["generate", "flare_regenerate"]
    assert "3년내" in r.answer and "5년내" not in r.answer and "LOW_CONFIDENCE" not in r.answer
    assert r.answer.endswith("보험자가 계약 당시 그 사실을 알았다면 해지할 수 없습니다.")     # the confident sentence is untouched
    assert verify_answer(r.draft, srcs).risk_level == RiskLevel.SOFT_FAIL
    assert verify_answer(r.answer, r.sources).risk_level == RiskLevel.PASS
    assert r.records[0].action == "replaced" and r.records[0].replacement in r.answer

def test_budget_and_offline(p):
    search = lambda q: p.search(q, classify_query(q), 5)
    srcs = search(Q)
    with ScriptedLLMServer(responder=flare_responder([D])) as srv:
        llm = OpenAICompatibleLLM(base_url=srv.url, model="scripted", api_key="k", max_retries=0)
        r = flare_generate(Q, classify_query(Q).query_type, srcs, llm, search, budget=FlareBudget(max_llm_calls=0))
        n = len(srv.requests)
    assert (r.extra_llm_calls, n, r.records[0].action) == (0, 1, "removed") and "5년내" not in r.answer
    off = flare_generate(Q, classify_query(Q).query_type, srcs, ExtractiveLLM(), search)
    assert (off.mode, off.extra_llm_calls, off.extra_retrievals) == ("off", 0, 0)
