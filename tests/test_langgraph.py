"""The course graph on LangGraph (`cragrag.course.graph_adapter`) against the plain-Python runner (`cragrag.course.judge`): on the
bundled corpus, with the scripted judge over HTTP, both take the same steps, make the same LLM calls (by purpose)
and give the same answer; LangGraph's recursion limit stops a loop that never converges; a missing LangGraph is a
clear ImportError. Skipped when the `[langgraph]` extra is not installed."""
import sys
from unittest import mock
import pytest

pytest.importorskip("langgraph")

from cragrag.decide.gate import REFUSAL_ANSWER
from cragrag.course.graph_adapter import LangGraphCRAG, build_graph, require_langgraph
from cragrag.course.judge import JudgeCRAG, JudgeState
from cragrag.models.llm import CallLog, OpenAICompatibleLLM
from cragrag.answering.pipeline import Pipeline
from cragrag.testing.judge_replies import judge_responder
from cragrag.testing.scripted import Reply, ScriptedLLMServer

Q_OK, Q_ABSENT, Q_GAP = "보험계약은 언제 성립하나요?", "주차장 정책 알려줘", "보험료 안 내서 보험이 끊겼는데 다시 살릴 수 있나요"

@pytest.fixture(scope="module")
def search():
    with Pipeline(qdrant_path=":memory:", trace_enabled=False) as p:
        p.index(progress=False)
        yield lambda q: p.retrieve(q).sources

@pytest.fixture(scope="module")
def llm():
    with ScriptedLLMServer(responder=judge_responder) as srv:
        yield OpenAICompatibleLLM(base_url=srv.url, model="scripted-judge", api_key="x", max_retries=0, timeout=10)

def outcome(r):
    return (r.steps, r.answer, r.is_refusal, r.refusal_reason, r.retries, r.tried,
            [c.purpose for c in r.llm_calls], [s.chunk_id for s in r.sources])

@pytest.mark.parametrize("kw", [{}, {"max_retries": 0}, {"strict": True}, {"only_grounded": True}],
                         ids=["course", "no-retry", "strict", "only-grounded"])
@pytest.mark.parametrize("q", [Q_OK, Q_ABSENT, Q_GAP], ids=["answerable", "absent", "colloquial"])
def test_same_run_as_judgecrag(search, llm, q, kw):
    got, want = LangGraphCRAG(search, llm, **kw).run(q), JudgeCRAG(search, llm, **kw).run(q)
    assert outcome(got) == outcome(want)
    assert got.llm_calls and [s.split(":")[0] for s in got.steps][0] == "retrieve"

def test_the_course_runs(search, llm):
    g = LangGraphCRAG(search, llm)
    a, b, c = (g.run(q) for q in (Q_OK, Q_ABSENT, Q_GAP))
    assert [x.purpose for x in a.llm_calls] == ["grade_docs", "generate", "grade_answer"]
    assert not a.is_refusal and "「상법」 제638조의2" in a.answer
    assert (b.answer, b.refusal_reason, b.retries) == (REFUSAL_ANSWER, "not_found", 2)
    assert [x.purpose for x in b.llm_calls] == ["grade_docs", "rewrite", "grade_docs", "rewrite", "grade_docs",
                                                "generate", "grade_answer"]
    assert not c.is_refusal and "부활" in c.tried[1]
    fb = LangGraphCRAG(search, llm, only_grounded=True).run(Q_ABSENT)
    assert (fb.steps[-1], fb.refusal_reason, len(fb.llm_calls)) == ("fallback", "not_relevant_at_cap", 5)

@pytest.mark.parametrize("limit", [5, 12])
def test_recursion_limit_is_honoured(search, limit):
    loop = lambda body: '{"relevant": false}' if "response_format" in body else "같은 검색어"
    with ScriptedLLMServer(responder=loop) as srv:
        ll = OpenAICompatibleLLM(base_url=srv.url, model="m", api_key="x", max_retries=0)
        got = LangGraphCRAG(search, ll, max_retries=50, max_steps=limit).run("보험")
        want = JudgeCRAG(search, ll, max_retries=50, max_steps=limit).run("보험")
    assert (len(got.steps), got.refusal_reason, got.answer) == (limit, "recursion_limit", REFUSAL_ANSWER)
    assert got.steps == want.steps

def test_model_failures_end_the_walk(search):
    with ScriptedLLMServer([Reply(status=500)]) as bad:
        ll = OpenAICompatibleLLM(base_url=bad.url, model="m", api_key="x", max_retries=0)
        st = JudgeState(Q_OK, Q_OK, tried=[Q_OK])
        assert LangGraphCRAG(search, ll).walk(st, CallLog()) == (["retrieve: 3 docs", "grade_docs: http"], "llm_http")
    with ScriptedLLMServer(['{"relevant": true}', Reply(delay=2, content="late")]) as slow:
        ll = OpenAICompatibleLLM(base_url=slow.url, model="m", api_key="x", max_retries=0, timeout=0.3)
        r = LangGraphCRAG(search, ll).run(Q_OK)
    assert (r.is_refusal, r.refusal_reason, r.steps[-1]) == (True, "llm_timeout", "generate: timeout")

def test_graph_shape():
    j = JudgeCRAG(search=lambda q: [], llm=None)
    nodes = set(build_graph(j).get_graph().nodes)
    assert nodes == {"__start__", "__end__", "retrieve", "grade_docs", "rewrite", "generate", "grade_answer"}
    strict = set(build_graph(JudgeCRAG(search=lambda q: [], llm=None, only_grounded=True)).get_graph().nodes)
    assert strict - nodes == {"fallback"}

def test_missing_langgraph_names_the_extra():
    with mock.patch.dict(sys.modules, {"langgraph": None, "langgraph.graph": None, "langgraph.errors": None}):
        with pytest.raises(ImportError, match=r"pip install 'cragrag\[langgraph\]'"):
            require_langgraph()
        with pytest.raises(ImportError, match="cragrag"):
            LangGraphCRAG(search=lambda q: [], llm=None)
