"""Grounded answering end to end: the answer contract (offline and with a scripted model that breaks its JSON), the
design's verification questions (no number → 미확인, no evidence → 문서 없음), the output guardrails' `checks` on every
answer, multi-query and the three-way branch as per-request switches over HTTP, the strict Self-RAG option, and the
"everything off" path that answers exactly as before."""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pytest
from fastapi.testclient import TestClient
from cragrag.decide.gate import REFUSAL_ANSWER
from cragrag.generate.grounded import GroundedReply
from cragrag.answering.pipeline import Pipeline
from cragrag.serve.server import create_app
from cragrag.testing.scripted import Reply, ScriptedLLMServer

@pytest.fixture(scope="module")
def p():
    with Pipeline(qdrant_path=":memory:", trace_enabled=False) as p:
        p.index(progress=False)
        yield p

def test_the_contract_offline(p):
    a = p.answer("보험계약은 언제 성립하나요?", grounded_answer=True)
    g = a.grounded
    assert not a.is_refusal and g["failure_reason"] is None and g["format_valid"]
    assert g["claims"] and all(c["chunk_ids"] for c in g["claims"])
    doc = g["evidence"][0]
    assert doc["title"] == "「상법」 제638조의2" and "제4편 보험" in doc["location"] and doc["summary"]
    assert a.answer.startswith(g["direct_answer"]) and "근거:" in a.answer
    assert {c for x in g["claims"] for c in x["chunk_ids"]} <= {s.chunk_id for s in a.sources}

@pytest.mark.parametrize("q", ["보험설계사의 모집수수료율은 몇 퍼센트인가요?", "보험설계사 한 명이 한 달 평균 모집하는 계약 건수는 몇 건인가요?"])
def test_a_number_not_in_the_evidence_ends_in_unverified(p, q):
    a = p.answer(q, grounded_answer=True)
    assert a.is_refusal and a.refusal_reason == "grounded_unverified"
    assert a.grounded["failure_reason"] == "미확인" and a.answer.startswith("[미확인]")
    assert not any(ch.isdigit() for ch in a.answer.split("(")[0])      # no estimate in the text

def test_a_question_the_gate_refuses_ends_in_no_documents(p):
    "An absent value the gate already refuses (its question is far from the index) ends as 문서 없음, never with a number."
    a = p.answer("국내 보험회사는 몇 개인가요?", grounded_answer=True)
    assert a.is_refusal and a.grounded["failure_reason"] in ("문서 없음", "미확인") and a.answer.startswith("[")
    assert not any(ch.isdigit() for ch in a.answer.split("(")[0])

def test_no_evidence_ends_in_no_documents(p):
    a = p.answer("피자 배달 지연 보상은 얼마인가요?", grounded_answer=True)
    assert a.is_refusal and a.grounded["failure_reason"] == "문서 없음" and a.answer.startswith("[문서 없음]")
    off = p.answer("피자 배달 지연 보상은 얼마인가요?")
    assert off.answer == REFUSAL_ANSWER and "grounded" not in off.model_dump()

def test_everything_off_answers_as_before(p):
    q = "고지의무를 위반하면 보험자가 계약을 해지할 수 있나요?"
    plain = p.answer(q, guardrails=False)
    d = plain.model_dump()
    assert not {"grounded", "checks", "corrective", "flare"} & set(d)
    assert p.last_trace["options"] == {"grounded_answer": False, "multi_query": False, "flare": False, "guardrails": False,
                                       "crag_mode": "gate", "self_rag_strict": False}
    on = p.answer(q)                                                     # the default: guardrails only
    assert on.answer == plain.answer and on.checks["has_source_citation"] and on.checks["no_pii"]
    assert on.checks["risk_level"] == "pass"

def _contract(text, sources=(1,), failure=None):
    return json.dumps({"direct_answer": text, "claims": [{"text": text, "sources": list(sources)}], "summaries": [],
                       "failure_reason": failure}, ensure_ascii=False)

def test_a_model_that_breaks_its_json(p):
    good = _contract("보험증권은 보험계약이 성립한 때 지체 없이 교부해야 합니다 (「상법」 제640조).")
    with ScriptedLLMServer(["```json\n{broken", good, "not json", '{"direct_answer": 1}']) as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x",
                     llm_max_retries=0, trace_enabled=False)
        a = m.answer("보험증권은 언제 교부해야 하나요?", grounded_answer=True)
        assert not a.is_refusal and a.grounded["attempts"] == 2 and a.grounded["format_valid"]
        assert "형식 검증에 실패" in srv.requests[1]["messages"][-1]["content"]       # the retry carries the error
        b = m.answer("보험증권은 언제 교부해야 하나요?", grounded_answer=True)
        assert b.is_refusal and b.grounded["format_valid"] is False and b.checks["format_valid"] is False
        assert "not json" not in b.answer                                           # never passed through

def test_the_model_estimating_a_number_is_caught(p):
    with ScriptedLLMServer([_contract("보험금청구권의 소멸시효는 5년입니다.")]) as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x", trace_enabled=False)
        a = m.answer("보험금청구권의 소멸시효는 몇 년인가요?", grounded_answer=True)
    assert a.is_refusal and a.grounded["failure_reason"] == "미확인" and "5년" in a.grounded["failure_detail"]

def test_guardrails_mask_the_answer_and_say_so(p):
    leak = "보험계약은 승낙으로 성립합니다 (「상법」 제638조의2). 담당자 010-1234-5678, 900101-1234568로 문의하세요."
    with ScriptedLLMServer(responder=lambda body: leak) as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x", trace_enabled=False)
        a = m.answer("보험계약은 언제 성립하나요?")
        nocite = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x",
                          trace_enabled=False)
        srv.responder = lambda body: "보험계약은 청약과 승낙으로 성립합니다."
        b = nocite.answer("보험계약은 언제 성립하나요?")
    assert "010-1234-5678" not in a.answer and a.checks["no_pii"] is False and "phone" in a.checks["masked"]
    assert b.checks["has_source_citation"] is False and b.answer.endswith("명시적 출처가 포함되지 않았습니다.*")

def test_strict_self_rag_refuses_what_never_verifies(p):
    with ScriptedLLMServer(responder=lambda body: "「상법」 제999조에 따라 청약 후 99일 내에 성립합니다.") as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x", trace_enabled=False)
        loose = m.answer("보험계약은 언제 성립하나요?")
        n = len(srv.requests)
        strict = m.answer("보험계약은 언제 성립하나요?", self_rag_strict=True)
        calls = len(srv.requests) - n
    assert not loose.is_refusal and loose.verification.risk_level.value == "hard_fail"   # returned, flagged
    assert strict.is_refusal and strict.refusal_reason == "not_grounded" and calls == 2   # N=2 generations, then refused

class _Search(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        q = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["query"]
        _Search.seen.append(q)
        out = {"results": [{"title": "사내 주차 안내", "url": "https://intra.example/parking", "published": "2026-11-01",
                            "content": "방문객 주차는 2시간까지 무료입니다."}]}
        self.send_response(200); self.end_headers(); self.wfile.write(json.dumps(out, ensure_ascii=False).encode())
    seen = []

def test_switches_per_request_over_http(p):
    api = ThreadingHTTPServer(("127.0.0.1", 0), _Search); threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        s = Pipeline(p.settings, store=p.store, external_search_url=f"http://127.0.0.1:{api.server_port}/search", allow_external=True,
                     trace_enabled=False)
        c = TestClient(create_app(s))
        r = c.post("/answer", json={"query": "방문객 주차는 몇 시간 무료인가요?"}).json()
        assert r["is_refusal"] and "corrective" not in r and _Search.seen == []      # gate mode: nothing leaves
        r = c.post("/answer", json={"query": "방문객 주차는 몇 시간 무료인가요?", "crag_mode": "three_way"}).json()
        assert not r["is_refusal"] and r["corrective"]["strategy"] == "external_only" and r["corrective"]["external_sources"] == 1
        assert r["sources"][0]["metadata"]["origin"] == "external" and "2시간" in r["answer"]
        r = c.post("/answer", json={"query": "방문객 주차 몇 시간 무료? 010-1234-5678", "crag_mode": "three_way"}).json()
        assert r["is_refusal"] and len(_Search.seen) == 1                               # a private query never leaves
        r = c.post("/answer", json={"query": "보험금 지급 기준", "multi_query": True, "grounded_answer": True}).json()
        assert not r["is_refusal"] and r["grounded"]["evidence"]
        assert c.post("/answer", json={"query": "x", "crag_mode": "web"}).status_code == 422
    finally: api.shutdown()

def test_flare_in_the_answer_path(p):
    from cragrag.testing.flare_replies import FlareDraft, flare_responder
    q = "고지의무를 위반하면 언제까지 계약을 해지할 수 있나요?"
    d = FlareDraft(q, "보험자는 고지의무 위반 사실을 안 날로부터 1월내에, 계약을 체결한 날로부터 5년내에 한하여 계약을 해지할 수 있습니다 (「상법」 제651조). "
                      "보험자가 계약 당시 그 사실을 알았다면 해지할 수 없습니다.", "5년내", "고지의무 위반 해지 제척기간", "3년내")
    with ScriptedLLMServer(responder=flare_responder([d])) as srv:
        m = Pipeline(p.settings, store=p.store, llm="openai", llm_base_url=srv.url, llm_model="scripted", llm_api_key="x", trace_enabled=False)
        off = m.answer(q)
        on = m.answer(q, flare=True)
    assert "5년내" in off.answer and off.verification.risk_level.value == "soft_fail" and "flare" not in off.model_dump()
    assert "3년내" in on.answer and "5년내" not in on.answer and on.verification is None      # verified clean
    assert on.flare["mode"] == "logprobs" and on.flare["extra_llm_calls"] == 1 and on.flare["sentences"][0]["action"] == "replaced"
    assert "flare" in m.last_trace and m.last_trace["options"]["flare"]
