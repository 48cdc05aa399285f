"Property tests: chunking never loses or duplicates the text of a live article, and respects max_chars."
import re
from hypothesis import given, settings, strategies as st, HealthCheck
from cragrag.indexing.documents import chunk_document, parse_legalize, parse_article_lines, Document, Line, load_documents
from pathlib import Path

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
HANGUL = st.text(alphabet=st.sampled_from(list("가나다라마바사아자차카타파하보험계약자금액일 .,「」()0123456789원%")), min_size=1, max_size=400)

def strip_ws(s): return re.sub(r"\s+", "", s)

@st.composite
def statute(draw):
    "A legalize-kr style law with random articles, 항, 호 and 목 of random lengths."
    lines, expected = ["# 시험법", ""], {}
    for n in range(1, draw(st.integers(1, 6)) + 1):
        aid = f"제{n}조" + (f"의{draw(st.integers(2, 3))}" if draw(st.booleans()) and n > 1 else "")
        if aid in expected: continue
        lines += [f"##### {aid} (제목{n})", ""]
        body = []
        if draw(st.booleans()) and n > 1 and not expected.get("deleted"):
            lines += ["삭제 <2020.1.1>", ""]; continue
        for p in range(draw(st.integers(1, 4))):
            head = draw(HANGUL).strip() or "본문"
            body.append(f"**{CIRCLED[p]}** {head}")
            for i in range(draw(st.integers(0, 5))):
                body.append(f"  {i+1}\\. {draw(HANGUL).strip() or '항목'}")
                for k in range(draw(st.integers(0, 2))):
                    body.append(f"    {'가나다'[k]}\\. {draw(HANGUL).strip() or '목'}")
        lines += [b for x in body for b in (x, "")]
        expected[aid] = body
    return "\n".join(lines), expected

@given(statute(), st.integers(60, 900))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_chunking_is_lossless(doc_and_expected, max_chars):
    text, expected = doc_and_expected
    arts, deleted = parse_legalize(text, "시험법")
    doc = Document("시험법", "시험법", "<mem>", "legalize", {}, arts, deleted)
    chunks = chunk_document(doc, max_chars)
    assert {a.article_id for a in arts} == set(expected)
    for a in arts:
        mine = [c for c in chunks if c.article_id == a.article_id]
        assert mine, a.article_id
        # every character of the article, in order, exactly once
        want = strip_ws("".join(re.sub(r"\*\*|\\", "", l) for l in expected[a.article_id]))
        assert strip_ws("".join(c.text for c in mine)) == want
        assert all(len(c.text) <= max_chars for c in mine)
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)

@given(st.text(max_size=2000), st.integers(50, 500))
@settings(max_examples=200, deadline=None)
def test_plain_line_parser_never_raises_and_keeps_text(text, max_chars):
    lines = [Line(t) for t in text.split("\n")]
    arts, deleted = parse_article_lines(lines)
    doc = Document("x", "x", "<mem>", "text", {}, arts, deleted)
    chunks = chunk_document(doc, max_chars)
    for a in arts:
        got = "".join(c.text for c in chunks if c.article_id == a.article_id)
        assert strip_ws(got) == strip_ws(a.text)
        assert all(len(c.text) <= max_chars for c in chunks)

def test_whole_shared_corpus_is_lossless():
    "Every live article of every real document in ../shared/corpus survives chunking intact."
    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    if not corpus.exists():
        import pytest; pytest.skip("../shared/corpus not present")
    for d in load_documents(corpus):
        chunks = chunk_document(d, 500)
        by_art = {}
        for c in chunks: by_art.setdefault(c.article_id, []).append(c.text)
        for a in d.articles:
            assert strip_ws("".join(by_art[a.article_id])) == strip_ws(a.text), (d.doc_id, a.article_id)
        assert all(len(c.text) <= 500 for c in chunks)
