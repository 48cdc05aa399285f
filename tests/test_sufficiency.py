"""The evidence-sufficiency answer mode end to end: through `Pipeline.answer` and `POST /answer`, per request and by
setting; the response's `sufficiency` field only in that mode; refusals that cite what was found; the trace record
with the ledger (ids and hashes, no texts); tenants; and revisions of one law side by side in one index."""
import json
from pathlib import Path
import pytest
from fastapi.testclient import TestClient
from cragrag.indexing.documents import demo_corpus_dir, load_demo_corpus, load_documents, revisions_dir
from cragrag.answering.pipeline import Pipeline
from cragrag.serve.server import create_app
from cragrag.evaluate.sufficiency_eval import load_sufficiency_golden

@pytest.fixture(scope="module")
def p():
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    p.index([*load_demo_corpus(), revisions_dir()], progress=False)
    return p

def test_gate_mode_is_the_default_and_has_no_sufficiency_field(p):
    r = p.answer("청약과 함께 보험료를 받은 보험사는 며칠 안에 승낙 여부를 통지해야 하나요?")
    assert r.sufficiency is None and "sufficiency" not in r.model_dump(mode="json")

def test_sufficient_answers_and_reports_coverage(p):
    r = p.answer("청약과 함께 보험료를 받은 보험사는 며칠 안에 승낙 여부를 통지해야 하나요?", answer_mode="sufficiency", include_ledger=True)
    assert not r.is_refusal and r.sufficiency["verdict"] == "SUFFICIENT" and r.sufficiency["coverage"] == 1.0
    assert any(s.metadata["article_id"] == "제638조의2" for s in r.sources)
    assert r.evidence and all("grades" in e and "span_id" in e for e in r.evidence)

def test_unanswerable_is_a_cited_refusal(p):
    r = p.answer("입사 1년 된 직원의 연차휴가는 며칠인가요?", answer_mode="sufficiency")
    assert r.is_refusal and r.refusal_reason == "insufficient_unanswerable" and r.sufficiency["verdict"] == "UNANSWERABLE"
    assert r.sufficiency["missing"] and r.sufficiency["rounds"] >= 1

def test_ambiguous_asks_instead_of_searching(p):
    r = p.answer("그 조항에서 정한 기한이 며칠이죠?", answer_mode="sufficiency")
    assert (r.refusal_reason, r.sufficiency["recommended_action"], r.sufficiency["rounds"]) == ("insufficient_ambiguous", "ASK_USER", 0)

def test_partial_names_what_is_missing_and_revisions_stay_apart(p):
    q = next(x for x in load_sufficiency_golden() if x["id"] == "suf029")["question"]   # the design's refund example
    demo = [d.doc_id for d in load_documents([demo_corpus_dir()])]
    r = p.answer(q, answer_mode="sufficiency", filters={"doc_id": demo})                # without the earlier revision
    assert r.sufficiency["verdict"] == "PARTIAL" and not r.is_refusal
    missing = [m["description"] for m in r.sufficiency["missing"]]
    assert sum("2021-06" in m for m in missing) == 2 and "[근거 부족]" in r.answer
    assert all("@" not in s.metadata["doc_id"] for s in r.sources)                   # the caller's filter held on every search

def test_contradictory_keeps_both_revisions(p):
    r = p.answer("2022년 3월 기준 보험업법 제96조에서 통신수단으로 보험계약을 해지할 수 있는 조건은 무엇이었나요?", answer_mode="sufficiency")
    assert r.sufficiency["verdict"] == "CONTRADICTORY" and r.refusal_reason == "insufficient_contradictory"
    sides = r.sufficiency["contradictions"][0]["sides"]
    assert len(sides) == 2
    assert {s.metadata["doc_id"] for s in r.sources} >= {"보험업법_법률@2020-12-08", "보험업법_법률@2022-12-31"}

def test_server_per_request_mode_and_trace_ledger(tmp_path):
    p = Pipeline(qdrant_path=":memory:", trace_dir=tmp_path, answer_mode="sufficiency"); p.index(progress=False)
    c = TestClient(create_app(p))
    j = c.post("/answer", json={"query": "보험업법 제96조 내용"}).json()
    assert j["sufficiency"]["verdict"] == "SUFFICIENT"                                  # the setting
    j = c.post("/answer", json={"query": "보험업법 제96조 내용", "answer_mode": "gate"}).json()
    assert "sufficiency" not in j                                                        # the request overrides it
    assert c.post("/answer", json={"query": "보험업법 제96조 내용", "answer_mode": "judge"}).status_code == 422
    recs = [json.loads(l) for f in sorted(Path(tmp_path).rglob("*.jsonl")) for l in f.read_text().splitlines()]
    led = next(r["sufficiency"]["ledger"] for r in recs if "sufficiency" in r)
    assert led["items"] and all("content_hash" in i and "text" not in i for i in led["items"])

def test_a_tenant_sees_only_its_own_evidence():
    shared = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    law = demo_corpus_dir() / "legalize-kr" / "보험사기방지특별법_법률.md"
    shared.for_tenant("team-a").index([law], progress=False)
    r = shared.for_tenant("team-b").answer("보험사기를 저지르면 어떤 처벌을 받나요?", answer_mode="sufficiency", include_ledger=True)
    assert r.is_refusal and not r.sources and not r.evidence

def _llm(body):
    "A scripted model: decomposes, grades spans, writes an answer; what it is asked decides which."
    import re
    system = body["messages"][0]["content"]
    if system.startswith("한국 법령·고시·약관 질문을"):
        return json.dumps({"requirements": [{"id": "R1", "description": "승낙 통지 기간",
                                             "source_constraints": [{"law": "상법", "article": "제638조의2"}], "numeric": True}]})
    if system.startswith("당신은 근거 판정기"):
        spans = re.findall(r"\[span_id\] (\S+)", body["messages"][1]["content"])
        return json.dumps({"grades": [{"span_id": s, "requirement_id": "R1", "grade": "DIRECT_SUPPORT"} for s in spans[:1]]})
    return "보험자는 30일 내에 낙부의 통지를 발송하여야 합니다. (근거: 「상법」 제638조의2 제1항)"

def test_llm_decomposer_and_judge_are_budgeted_and_traced(p, tmp_path):
    from cragrag.testing.scripted import ScriptedLLMServer
    with ScriptedLLMServer(responder=_llm) as srv:
        q = Pipeline(p.settings, store=p.store, trace_enabled=True, trace_dir=tmp_path, llm="openai", llm_base_url=srv.url, llm_model="scripted",
                     sufficiency_llm_decomposer=True, sufficiency_llm_judge=True, sufficiency_max_llm_calls=2)
        r = q.answer("청약과 함께 보험료를 받은 보험사는 며칠 안에 승낙 여부를 통지해야 하나요?", answer_mode="sufficiency")
    assert r.sufficiency["verdict"] == "SUFFICIENT" and not r.is_refusal
    rec = next(json.loads(l) for f in Path(tmp_path).rglob("*.jsonl") for l in f.read_text().splitlines())
    assert rec["sufficiency"]["decomposition"]["source"] == "llm" and rec["sufficiency"]["decomposition"]["version"] == "req-v1"
    assert rec["sufficiency"]["judge"]["ok"] and rec["sufficiency"]["judge_calls"] <= 1       # 2 calls in all: one decomposition, one judge
    kinds = [c["purpose"] for c in rec["llm_calls"]]
    assert kinds.count("decompose") == 1 and kinds.count("support") <= 1
