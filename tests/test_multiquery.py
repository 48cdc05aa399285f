"Multi-query retrieval end to end on the bundled corpus (cragrag.retrieval.multiquery)."
from collections import Counter
import pytest
from cragrag.retrieval.multiquery import norm_ws, rule_variants
from cragrag.retrieval.routing import classify_query

QUESTIONS = ["보험 깨면 돈 돌려받나요?", "보험 들 때 병 숨기면 어떻게 돼요", "보험금지급기준이 뭐예요",
             "상법 650조의 2", "보험업법 제102조의2 내용", "설계사가 보험 갈아타라고 했는데 괜찮나요"]

def hits(src): return [s for s in src if not s.metadata.get("sibling_of")]

@pytest.fixture(scope="module")
def p():
    from cragrag.answering.pipeline import Pipeline
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    p.index(progress=False)
    yield p
    p.close()

@pytest.mark.parametrize("q", QUESTIONS)
def test_variants_deterministic_and_distinct(q):
    vs = rule_variants(q, classify_query(q))
    assert vs[0] == q and 1 <= len(vs) <= 9
    assert len({norm_ws(v) for v in vs}) == len(vs)
    assert rule_variants(q, classify_query(q)) == vs

def test_variants_carry_statutory_terms_and_article_forms():
    assert any("해지" in v for v in rule_variants("보험 깨면 돈 돌려받나요?"))
    assert "상법 제650조의2" in rule_variants("상법 650조의 2", classify_query("상법 650조의 2"))

def test_top_k_and_siblings(p):
    q = "보험 들 때 병 숨기면 어떻게 돼요"
    src = p.multi_search(q, classify_query(q), top_k=5)
    h = hits(src)
    assert len(h) == 5 and len(src) >= len(h)
    ids = {s.chunk_id for s in h}
    assert all(s.metadata["sibling_of"] in ids for s in src if s.metadata.get("sibling_of"))
    assert len({s.chunk_id for s in src}) == len(src)
    assert all(s.metadata["variants_hit"] for s in h)

def test_doc_filter_never_leaks(p):
    q = "보험 깨면 돈 돌려받나요?"
    src = p.multi_search(q, classify_query(q), top_k=10, filters={"doc_id": "상법_법률"})
    assert src and {s.metadata["doc_id"] for s in src} == {"상법_법률"}

def test_more_documents_than_single_query(p):
    q = "보험금 지급 기준"; r = classify_query(q)
    one, many = hits(p.search(q, r, 10)), hits(p.multi_search(q, r, 10))
    assert len(many) <= 10
    assert len(Counter(s.metadata["doc_id"] for s in many)) >= len(Counter(s.metadata["doc_id"] for s in one))
