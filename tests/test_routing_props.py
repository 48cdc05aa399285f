"Property tests for the router: total on arbitrary unicode, deterministic, insensitive to repeated whitespace."
from hypothesis import given, settings, strategies as st
from cragrag.retrieval.routing import classify_query
from cragrag.core.schema import QueryType, SearchStrategy

KOREANISH = st.text(alphabet=st.sampled_from(list("제조의항호별표부칙서식 0123456789-가나다보험금청구방법차이되나요?가능한가요①②「」vs")), max_size=80)

@given(st.one_of(st.text(max_size=300), KOREANISH))
@settings(max_examples=500, deadline=None)
def test_never_raises_and_is_deterministic(q):
    r = classify_query(q)
    assert isinstance(r.query_type, QueryType) and isinstance(r.strategy, SearchStrategy)
    assert classify_query(q) == r
    assert classify_query("  " + q.replace(" ", "   ") + "\n") == r   # whitespace runs do not change the route

@given(st.integers(1, 999), st.sampled_from(["", "의2", "의 3"]), st.sampled_from(["제{n}조{s}", "제 {n} 조{s}", "{n}조{s}"]))
def test_article_lookups_in_any_spacing(n, suffix, form):
    q = form.format(n=n, s=suffix) + " 내용 알려줘"
    r = classify_query(q)
    assert (r.query_type, r.strategy) == (QueryType.STRUCTURED_LOOKUP, SearchStrategy.BM25_HEAVY), q
