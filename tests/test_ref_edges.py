"""Index-time reference edges: a few real articles of the bundled corpus, indexed into an in-memory pipeline, carry
their references (준용, 위임, 인용 through 법 / 영, 별표) in the stored payload as `ref_edges`, and a retrieved source
hands them on in its metadata."""
import re
from pathlib import Path
import pytest
import cragrag
from cragrag.answering.pipeline import Pipeline

CORPUS = Path(cragrag.__file__).parent / "corpus"

def excerpt(src: Path, starts: list[str], start_re: str, end_re: str) -> str:
    "`src`'s front matter and title, then only the articles whose first line starts with one of `starts`."
    lines = src.read_text(encoding="utf-8").splitlines()
    head = lines.index("---", 1) + 1                                   # front matter: from the first '---' to the second
    out, keep = lines[:head] + [next(l for l in lines[head:] if l.startswith("# ")), ""], False
    for l in lines[head:]:
        if re.match(start_re, l): keep = any(l.startswith(s) for s in starts)
        elif re.match(end_re, l): keep = False
        if keep: out.append(l)
    return "\n".join(out) + "\n"

@pytest.fixture(scope="module")
def pipe(tmp_path_factory):
    d = tmp_path_factory.mktemp("refs")
    md = dict(start_re=r"^##### 제\d", end_re=r"^#")                       # legalize-kr: '##### 제739조 (준용규정)'
    (d / "상법_법률.md").write_text(excerpt(CORPUS / "legalize-kr" / "상법_법률.md", ["##### 제732조 ", "##### 제739조 "], **md), encoding="utf-8")
    (d / "보험업법_법률.md").write_text(excerpt(CORPUS / "legalize-kr" / "보험업법_법률.md", ["##### 제18조 "], **md), encoding="utf-8")
    (d / "보험업감독규정_고시.md").write_text(excerpt(CORPUS / "regulate-kr" / "보험업감독규정_고시.md", ["제1-1조 ", "제1-2조의2("],
                                                 start_re=r"^제\d+-\d+조", end_re=r"^\s+제\d+[장절]"), encoding="utf-8")
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    rep = p.index(d, progress=False)
    assert (rep.documents, rep.written) == (3, rep.chunks)
    yield p
    p.close()

def stored(p, doc_id, article_id):
    "(kind, target law, target article, 항) of every edge stored on the article's chunks."
    pts = sorted(p.store.scroll({"doc_id": doc_id, "article_id": article_id}, fields=["seq", "ref_edges"]), key=lambda x: x[1]["seq"])
    assert pts, f"{doc_id} {article_id} not indexed"
    return [(e["kind"], e["target_law"], e["target_article"], e["target_paragraph"]) for _, x in pts for e in x["ref_edges"]]

def test_every_chunk_carries_ref_edges(pipe):
    pays = [x for _, x in pipe.store.scroll(fields=["article_id", "ref_edges"])]
    assert len(pays) == pipe.store.count() and all(isinstance(x["ref_edges"], list) for x in pays)
    assert {x["article_id"] for x in pays} == {"제732조", "제739조", "제18조", "제1-1조", "제1-2조의2"}

def test_mutatis_mutandis(pipe):   # 상법 제739조: 상해보험에 관하여는 제732조를 제외하고 생명보험에 관한 규정을 준용한다.
    assert stored(pipe, "상법_법률", "제739조") == [("applies_mutatis", None, "제732조", None)]

def test_delegation_and_mutatis(pipe):   # 보험업법 제18조 ② 대통령령으로 정하는 자본감소 … ③ 제141조제2항ㆍ제3항, 제149조 및 제151조제3항을 준용한다.
    assert stored(pipe, "보험업법_법률", "제18조") == [
        ("delegates", "보험업법시행령", None, None), ("applies_mutatis", None, "제141조", 2),
        ("applies_mutatis", None, "제149조", None), ("applies_mutatis", None, "제151조", 3)]

def test_aliases_come_from_the_document(pipe):
    # 제1-2조의2 cites "영 제1조의2제5항 … 영 제8조제2항 … 별표1"; only 제1-1조, another chunk, says 영 is 보험업법시행령
    assert stored(pipe, "보험업감독규정_고시", "제1-2조의2") == [
        ("refers", "보험업법시행령", "제1조의2", 5), ("refers", "보험업법시행령", "제8조", 2), ("appendix", None, "별표1", None)]

def test_retrieved_sources_carry_the_edges(pipe):
    res = pipe.retrieve("상해보험에 관한 준용규정", filters={"doc_id": "상법_법률"})
    s = next(s for s in res.sources if s.metadata.get("article_id") == "제739조")
    assert [(e["kind"], e["target_article"]) for e in s.metadata["ref_edges"]] == [("applies_mutatis", "제732조")]
