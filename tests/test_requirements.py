"Property tests for evidence requirements and the reference graph: decomposition is total on arbitrary text with unique ids and relations inside the question; no edge points at its own article."
from functools import lru_cache
from hypothesis import given, settings, strategies as st
from cragrag.indexing.documents import chunk_document, load_demo_corpus
from cragrag.indexing.refgraph import ReferenceGraph, article_edges, chunk_edges_payload
from cragrag.decide.sufficiency.requirements import Requirement, decompose_requirements, derived_requirements, renumber

WORDS = ["제650조", "제 638조의2", "②", "3항", "1호", "별표 14", "「보험업법」", "상법", "시행령", "대통령령으로 정하는", "에서 정한",
         "와", "과", "랑", "의", "는", ",", "차이", "비교", "다른가요?", "요건과 예외", "단서", "개정 전", "개정 후", "현재", "지금",
         "6월보다", "2021년 시행 당시", "2016년 1월 25일자", "짧아졌고", "바뀌었는가", "기간", "금액", "며칠", "보험료", "해지",
         "이 법", "법 제24조", "영 제25조", "같은 법", "준용한다", "부칙", "vs", "  ", "\n"]
KOREANISH = st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join)

def _check(reqs: list[Requirement]):
    ids = [r.id for r in reqs]
    assert ids == [f"R{i}" for i in range(1, len(reqs) + 1)]           # unique, in order
    assert all(x.target in ids and x.target != r.id for r in reqs for x in r.relations)
    assert all(r.description.strip() for r in reqs)

@given(st.one_of(st.text(max_size=200), KOREANISH))
@settings(max_examples=400, deadline=None)
def test_decomposition_is_total_and_well_formed(q):
    reqs = decompose_requirements(q)
    _check(reqs)
    assert decompose_requirements(q) == reqs                          # deterministic
    assert (reqs == []) == (not q.split())                            # empty only for blank text

@given(KOREANISH)
@settings(max_examples=200, deadline=None)
def test_renumbering_keeps_relations_inside(q):
    reqs = decompose_requirements(q)
    shuffled = [r.model_copy(update={"id": f"x{len(reqs) - i}"}) for i, r in enumerate(reqs)]
    _check(renumber(shuffled))

@lru_cache(maxsize=1)
def _corpus():
    docs = load_demo_corpus()
    chunks = [c for d in docs for c in chunk_document(d)]
    return chunks, ReferenceGraph.build(chunks)

def test_graph_never_links_an_article_to_itself():
    chunks, g = _corpus()
    assert g.n_edges > 0
    for key, targets in g.forward.items():
        assert key not in targets
    for key in g.chunks:
        assert key not in g.neighbours(key)

@given(st.sampled_from(range(400)), KOREANISH)
@settings(max_examples=150, deadline=None)
def test_edges_never_point_at_their_own_article(i, noise):
    chunks, g = _corpus()
    c = chunks[i * 3 % len(chunks)]
    text = c.text + " " + noise + f" {c.article_id}에 따라"
    for e in article_edges(text, c.doc_title, article_id=c.article_id):
        assert not (e.target_law is None and e.target_article == c.article_id)
        assert 0 <= e.span[0] < e.span[1] <= len(text)
    assert [d["target_article"] for d in chunk_edges_payload(c)] == [e.target_article for e in article_edges(c.text, c.doc_title, article_id=c.article_id)]

@given(KOREANISH, st.integers(0, 6))
@settings(max_examples=150, deadline=None)
def test_derived_requirements_are_bounded_and_well_formed(q, n):
    _, g = _corpus()
    reqs = decompose_requirements(q)
    out = derived_requirements(reqs, g.edge_map(), max_new=n)
    assert out[:len(reqs)] == reqs and len(out) - len(reqs) <= n
    _check(out)
    assert all(r.origin == "reference" and not r.required and [x.type for x in r.relations] == ["DERIVED_FROM"] for r in out[len(reqs):])
