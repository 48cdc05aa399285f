"The labelled evidence-sufficiency set: loads, has enough of every verdict, its gold exists, its splits are fair."
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
import pytest
from cragrag.indexing.documents import demo_corpus_dir, load_demo_corpus, load_document
from cragrag.evaluate.sufficiency_eval import VERDICTS, load_sufficiency_golden

SHARED = Path("/work/shared/corpus")   # not shipped: the shared rows are checked only where it exists
SHARED_FILES = [SHARED/"revisions"/f for f in ("보험업법_법률@2020-12-08.md", "보험업법_법률@2022-12-31.md", "상법_법률@2020-12-29.md")] + \
               [SHARED/"legalize-kr"/f"{f}.md" for f in ("화재의예방및안전관리에관한법률_법률", "소방시설설치및관리에관한법률_법률")]
MINIMUM = {"SUFFICIENT": 20, "PARTIAL": 15, "UNANSWERABLE": 12, "STALE": 8, "AMBIGUOUS": 8}   # in the bundled rows

ROWS = load_sufficiency_golden()

def refs(row):
    "Every (doc_id, article_id) a row names: gold, stale and conflicting evidence, candidates."
    gold = [g for r in row["requirements"] for g in r["gold"]]
    extra = [g for k in ("stale_evidence", "conflicting", "candidates") for g in row.get(k, [])]
    return {(g["doc_id"], g["article_id"]) for g in gold + extra}

@lru_cache(None)
def articles(shared: bool) -> frozenset:
    docs = load_demo_corpus() + ([load_document(f) for f in SHARED_FILES] if shared else [])
    return frozenset((d.doc_id, a.article_id) for d in docs for a in d.articles)

def test_loads_with_unique_ids():
    assert len(ROWS) >= 80
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    assert len(load_sufficiency_golden(corpus="bundled")) >= 80
    assert {r["corpus"] for r in ROWS} == {"bundled", "shared"}

def test_counts_per_verdict():
    n = Counter(r["verdict"] for r in ROWS if r["corpus"] == "bundled")
    for v, k in MINIMUM.items(): assert n[v] >= k, (v, n[v])
    assert Counter(r["verdict"] for r in ROWS)["CONTRADICTORY"] >= 4
    assert set(Counter(r["verdict"] for r in ROWS)) == set(VERDICTS)

def test_missing_is_what_has_no_gold():
    for r in ROWS:
        v, missing = r["verdict"], set(r["missing"])
        if v == "SUFFICIENT": assert not missing, r["id"]
        elif v in ("UNANSWERABLE", "STALE", "CONTRADICTORY", "AMBIGUOUS"): assert missing, r["id"]
        if v == "PARTIAL":   # some but not all required slots covered
            req = [x for x in r["requirements"] if x["required"]]
            assert 0 < len(missing) < len(req), r["id"]
        if v == "UNANSWERABLE": assert not refs(r), r["id"]
        if v == "STALE": assert r.get("stale_evidence"), r["id"]
        if v == "CONTRADICTORY": assert len(r.get("conflicting", [])) >= 2, r["id"]

def test_bundled_gold_exists():
    have = articles(False)
    for r in ROWS:
        if r["corpus"] == "bundled":
            assert refs(r) <= have, (r["id"], refs(r) - have)

@pytest.mark.skipif(not all(f.exists() for f in SHARED_FILES), reason="the shared corpus is not here")
def test_shared_gold_exists():
    have = articles(True)
    for r in ROWS:
        assert refs(r) <= have, (r["id"], refs(r) - have)

def test_refund_example():
    (b,) = [r for r in ROWS if r["corpus"] == "bundled" and r.get("relations") and "손해사정" in r["question"]]
    assert (b["verdict"], b["missing"]) == ("PARTIAL", ["r2", "r4"])
    assert [x["revision"] for x in b["requirements"]] == ["current", "2020-12-08", "current", "2020-12-08"]

def test_splits_balanced():
    for v in VERDICTS:
        n = Counter(r["split"] for r in ROWS if r["verdict"] == v)
        total = n["dev"] + n["heldout"]
        assert abs(n["heldout"] - total / 3) <= 1, (v, n)
    assert {r["id"] for r in load_sufficiency_golden("dev")}.isdisjoint({r["id"] for r in load_sufficiency_golden("heldout")})

def test_questions_do_not_copy_the_documents():
    "No question shares a 12-character run (spaces ignored) with a document: the questions are written, not lifted."
    files = list(demo_corpus_dir().rglob("*.md")) + ([f for f in SHARED.rglob("*.md")] if SHARED.exists() else [])
    text = "\n".join(re.sub(r"\s", "", f.read_text(encoding="utf-8")) for f in files)
    for r in ROWS:
        q = re.sub(r"\s", "", r["question"])
        runs = [q[i:i + 12] for i in range(len(q) - 11) if q[i:i + 12] in text]
        assert not runs, (r["id"], runs[:3])
