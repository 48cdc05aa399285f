"""Trust boundaries, end to end: tenants never see each other's chunks (a property test over retrieve, answer,
siblings, the critic's corpus look-ups and the title list), API keys on the HTTP API, loopback without keys, request
caps, a whole-request deadline over a hung LLM, an oversized completion, and control characters in queries. Each test
reproduces one finding of the trust review: it failed on the code before the fix."""
import json, random, re, threading, time
from importlib.resources import files
from pathlib import Path
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings, strategies as st
from cragrag.serve.auth import KeyRing
from cragrag.check.critic import corpus_lookup
from cragrag.indexing.documents import load_documents
from cragrag.answering.pipeline import Pipeline
from cragrag.serve.server import create_app, serve
from cragrag.testing.scripted import Reply, ScriptedLLMServer

CORPUS = Path(str(files("cragrag") / "corpus"))
LAWS = {"fraud": CORPUS / "legalize-kr" / "보험사기방지특별법_법률.md",
        "nuclear": CORPUS / "regulate-kr" / "원자력손해배상보상계약_약관_고시.md",
        "table": CORPUS / "regulate-kr" / "보험업감독규정_별표1.md"}
TITLES = {k: load_documents([v])[0].title for k, v in LAWS.items()}
TENANTS = {"team-a": ["fraud", "nuclear"], "team-b": ["fraud"], "team-c": ["table"]}   # overlapping: fraud twice
QUERIES = ["보험사기를 저지르면 어떤 처벌을 받나요?", "원자력 손해 배상 보상계약의 보상금", "보험사기방지 특별법 제8조",
           "보험회사가 수사기관에 통보해야 하는 경우", "별표 1 내용", "보험금 지급 기준", "보험 사기 처벌", "피자 배달 지연 보상"]

@pytest.fixture(scope="module")
def tenants():
    shared = Pipeline(qdrant_path=":memory:", trace_enabled=False)
    views = {t: shared.for_tenant(t) for t in TENANTS}
    for t, laws in TENANTS.items(): views[t].index([LAWS[x] for x in laws], progress=False)
    return shared, views

def _tenants_of(sources): return {s.metadata.get("tenant") for s in sources}

def test_tenant_views_hold_their_own_copies(tenants):
    shared, views = tenants
    counts = {t: v.store.count() for t, v in views.items()}
    assert sum(counts.values()) == shared.store.count() and all(counts.values())
    assert counts["team-a"] > counts["team-b"]                     # the shared law is stored once per tenant
    assert views["team-b"].indexed_titles() == ["보험사기방지 특별법"]

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tenant=st.sampled_from(sorted(TENANTS)), query=st.sampled_from(QUERIES), top_k=st.integers(1, 12),
       window=st.integers(0, 3), doc_filter=st.sampled_from([None, ["보험사기방지특별법_법률"], ["원자력손해배상보상계약_약관_고시", "보험업감독규정_별표1"]]))
def test_no_result_ever_carries_another_tenants_chunk(tenants, tenant, query, top_k, window, doc_filter):
    shared, views = tenants
    v = views[tenant]
    filters = {"doc_id": doc_filter} if doc_filter else None
    r = v.retrieve(query, top_k=top_k, filters=filters)
    assert _tenants_of(r.sources) <= {tenant}
    hits = v.search(query, r.route, top_k, filters)                  # siblings included (the window setting's)
    assert _tenants_of(hits) <= {tenant}
    a = v.answer(query, top_k=top_k, filters=filters)
    assert _tenants_of(a.sources) <= {tenant}
    m = v.answer(query, top_k=top_k, filters=filters, multi_query=True, grounded_answer=True)   # batched variant searches
    assert _tenants_of(m.sources) <= {tenant}
    own = {h.id for h in v.store.retrieve([c for x in (m.grounded or {}).get("claims", []) for c in x["chunk_ids"]])}
    assert own == {c for x in (m.grounded or {}).get("claims", []) for c in x["chunk_ids"]}     # every cited chunk is the tenant's
    assert set(v.indexed_titles()) == {TITLES[x] for x in TENANTS[tenant]}
    has = corpus_lookup(v.store, v.indexed_titles)
    assert has("「보험사기방지 특별법」 제8조") == ("fraud" in TENANTS[tenant])   # the critic's look-up sees only the tenant's laws

def test_the_offline_rewrite_learns_from_a_tenants_own_chunks_only(tenants):
    "The glossary's wording is chosen by the tenant's chunks: a word only another tenant's laws hold never enters its rewrite."
    shared, views = tenants
    own = {t: v.index_texts() for t, v in views.items()}
    assert {t: len(x) for t, x in own.items()} == {t: v.store.count() for t, v in views.items()}
    assert not any("해지" in x for x in own["team-c"]) and any("해지" in x for x in own["team-a"])   # the rewrite's 해지 is team-a's word, not team-c's
    for q in ["회사가 보험 깨면 돈 돌려받나요?", "보험사가 망하면 어떻게 되나요?", "사장님이 월급을 안 줘요"]:
        for t, v in views.items():
            r = v.answer(q)
            for rec in (v.last_trace.get("crag") or {}).get("attempts", [])[1:]:   # the rewrites this tenant's request searched
                words = set(re.findall(r"\w+", rec["query"])) - set(re.findall(r"\w+", q))
                assert all(any(w in x for x in own[t]) for w in words), (t, q, rec["query"])
            assert _tenants_of(r.sources) <= {t}

def test_the_router_reads_a_tenants_own_titles_only(tenants):
    "A lookup is read over the tenant's own titles: another tenant's law named in a query is no name of this index."
    _, views = tenants
    for t, v in views.items():
        assert set(v.router().names.laws) == {TITLES[x] for x in TENANTS[t]}
    q = "원자력손해배상보상계약 약관 제2조 보상손실의 보상"                 # team-a's 약관, by its title and the heading of its 제2조
    assert [views[t].retrieve(q).route.query_type.value for t in ("team-a", "team-b")] == ["structured_lookup", "interpretation"]
    assert views["team-b"].router().named_laws(q) == []

def test_a_tenant_cannot_widen_or_drop(tenants):
    _, views = tenants
    with pytest.raises(PermissionError, match="scoped to tenant 'team-b'"):
        views["team-b"].retrieve("보험사기", filters={"tenant": ["team-a", "team-b"]})
    with pytest.raises(PermissionError, match="cannot recreate"):
        views["team-b"].index([LAWS["fraud"]], recreate=True)

def test_api_keys_scope_every_request(tenants):
    shared, _ = tenants
    ring = KeyRing(); ka, _ = ring.add("team-a"); kc, _ = ring.add("team-c")
    api = TestClient(create_app(shared, keys=ring))
    body = {"query": "보험사기를 저지르면 어떤 처벌을 받나요?", "top_k": 5}
    assert [api.post(u, json=body).status_code for u in ("/retrieve", "/answer")] == [401, 401]   # finding: open to anyone
    assert api.get("/docs").status_code == 404 and api.get("/openapi.json").status_code == 401
    ra = api.post("/retrieve", json=body, headers={"Authorization": f"Bearer {ka}"}).json()
    assert ra["sources"] and {s["metadata"]["tenant"] for s in ra["sources"]} == {"team-a"}
    rc = api.post("/retrieve", json=body, headers={"X-API-Key": kc}).json()
    assert {s["metadata"]["tenant"] for s in rc["sources"]} <= {"team-c"}
    assert all("보험사기" not in s["metadata"]["doc_title"] for s in rc["sources"])
    assert api.post("/retrieve", json={**body, "filters": {"tenant": "team-a"}}, headers={"X-API-Key": kc}).status_code == 403

def test_keys_from_the_environment_scope_requests_too(tenants, monkeypatch):
    import subprocess, sys
    shared, _ = tenants
    from pathlib import Path as _P
    out = subprocess.run([str(_P(sys.executable).parent / "cragrag"), "keys", "add", "--tenant", "team-a", "--env"],
                         capture_output=True, text=True, timeout=120).stdout.splitlines()
    key, entry = out[0], out[-1]
    assert entry.startswith("sha256:") and entry.endswith("=team-a:reader") and key not in entry   # only the hash leaves
    monkeypatch.setenv("CRAGRAG_API_KEYS", entry)
    from cragrag.core.config import load_settings
    p = Pipeline(load_settings(), store=shared.store, trace_enabled=False)
    api = TestClient(create_app(p))
    body = {"query": "보험사기를 저지르면 어떤 처벌을 받나요?", "top_k": 5}
    assert api.post("/retrieve", json=body).status_code == 401
    r = api.post("/retrieve", json=body, headers={"Authorization": f"Bearer {key}"}).json()
    assert r["sources"] and {s["metadata"]["tenant"] for s in r["sources"]} == {"team-a"}

def test_without_keys_the_server_stays_on_loopback():
    with pytest.raises(ValueError, match="loopback only"):
        serve("0.0.0.0", pipeline=Pipeline(qdrant_path=":memory:", trace_enabled=False))

def test_expensive_requests_are_refused_before_they_run(tenants):
    shared, _ = tenants
    api = TestClient(create_app(Pipeline(shared.settings, store=shared.store, trace_enabled=False)))
    huge = {"query": "보험금", "filters": {"doc_id": [f"doc-{i}" for i in range(20_000)]}}   # finding: never answered in 100 s
    assert api.post("/retrieve", json=huge).status_code == 413
    many = {"query": "보험금", "filters": {"doc_id": [f"doc-{i}" for i in range(1_000)]}}
    r = api.post("/retrieve", json=many); assert r.status_code == 422 and "settings.max_filter_values" in r.text
    r = api.post("/retrieve", json={"query": "보험금", "top_k": 200}); assert r.status_code == 422 and "max_request_top_k" in r.text

def test_a_hung_llm_costs_one_deadline_not_timeout_times_retries(tenants, tmp_path):
    shared, _ = tenants
    with ScriptedLLMServer() as srv:
        for _ in range(6): srv.push(Reply(delay=3, content="늦은 답"))
        p = Pipeline(shared.settings, store=shared.store, trace_enabled=False, llm="openai", llm_base_url=srv.url,
                     llm_model="m", llm_api_key="x", llm_timeout=2, llm_max_retries=1, request_deadline_s=1.5)
        a = p.for_tenant("team-a").answer("보험사기를 저지르면 어떤 처벌을 받나요?")
        assert a.is_refusal and a.refusal_reason in ("llm_timeout", "deadline")
        assert len(srv.requests) == 1          # before: 2 (timeout × (1 + retries)); now one call cut to the deadline

def test_an_oversized_completion_is_refused_not_verified(tenants):
    shared, _ = tenants
    with ScriptedLLMServer() as srv:
        srv.push(Reply(content="보험사기방지 특별법 제8조에 따라 처벌합니다. " * 700_000))   # ~16 MB: finding 5
        p = Pipeline(shared.settings, store=shared.store, trace_enabled=False, llm="openai", llm_base_url=srv.url,
                     llm_model="m", llm_api_key="x", llm_max_retries=0, rewriter="glossary")
        a = p.for_tenant("team-a").answer("보험사기를 저지르면 어떤 처벌을 받나요?")
        assert a.is_refusal and a.refusal_reason == "llm_too_long" and len(a.answer) < 100

def test_control_characters_are_not_echoed_or_stored(tenants, tmp_path):
    shared, _ = tenants
    p = Pipeline(shared.settings, store=shared.store, trace_enabled=True, trace_dir=tmp_path)
    q = "보험사기\x00를 저지르면\x1b[2J 어떤 처벌\u202e을 받나요?\u200b"
    a = p.for_tenant("team-a").answer(q)
    assert a.query == "보험사기를 저지르면[2J 어떤 처벌을 받나요?"
    text = "".join(f.read_text(encoding="utf-8") for f in tmp_path.rglob("*.jsonl"))
    assert text and not any(c in text for c in "\x00\x1b\u202e\u200b") and "\\u0000" not in text and "\\u001b" not in text

def test_traces_hold_one_tenants_records_and_no_personal_data(tenants, tmp_path):
    from cragrag.answering.traces import read_traces, trace_summary
    shared, _ = tenants
    p = Pipeline(shared.settings, store=shared.store, trace_enabled=True, trace_dir=tmp_path)
    a, b = p.for_tenant("team-a"), p.for_tenant("team-b")
    a.answer("제 주민번호는 900101-1234568이고 연락처는 010-1234-5678인데 보험사기 처벌은?")   # finding 3: stored verbatim
    b.answer("보험사기를 저지르면 어떤 처벌을 받나요?"); b.answer("보험사기 처벌")
    raw = "".join(f.read_text(encoding="utf-8") for f in tmp_path.rglob("*.jsonl"))
    assert "900101-1234568" not in raw and "010-1234-5678" not in raw and "[주민등록번호]" in raw
    ra, _ = read_traces(tmp_path, tenant="team-a"); rb, _ = read_traces(tmp_path, tenant="team-b")
    assert (len(ra), len(rb), trace_summary(rb)["requests"]) == (1, 2, 2)
    assert {r["tenant"] for r in ra + rb} == {"team-a", "team-b"} and all(r["tenant"] == "team-b" for r in rb)

def test_an_unscoped_index_run_never_deletes_a_tenants_copy(tenants):
    shared, views = tenants
    before = {t: v.store.count() for t, v in views.items()}
    rep = shared.index([LAWS["fraud"]], progress=False)                    # the same law, no tenant: its own copy
    assert rep.written > 0 and {t: v.store.count() for t, v in views.items()} == before
    rep = shared.index([LAWS["table"]], progress=False)                   # and its clean-up sees only untenanted points
    assert {t: v.store.count() for t, v in views.items()} == before

def test_a_keys_file_is_watched_and_an_expired_key_is_refused(tenants, tmp_path):
    "Review findings (d) and (e): a revoke needed a restart; keys never expired."
    from cragrag.serve.auth import save_keys
    shared, _ = tenants
    ring = KeyRing(); ka, ea = ring.add("team-a"); kx, ex = ring.add("team-a", expires="2099-01-01")
    ex["expires"] = "2020-01-01T00:00:00Z"                                      # a key whose day has passed
    f = save_keys(ring, tmp_path / "keys.json")
    api = TestClient(create_app(Pipeline(shared.settings, store=shared.store, trace_enabled=False, api_keys_file=f)))
    body = {"query": "보험사기를 저지르면 어떤 처벌을 받나요?", "top_k": 5}
    status = lambda k: api.post("/retrieve", json=body, headers={"X-API-Key": k})
    assert status(ka).status_code == 200
    r = status(kx)
    assert r.status_code == 401 and "expired" in r.json()["detail"] and "team-a" not in r.text
    ring.revoke(ea["id"]); save_keys(ring, f)                                   # what `cragrag keys revoke` does
    end = time.monotonic() + 30                                                 # (the file is looked at once a second)
    while status(ka).status_code != 401 and time.monotonic() < end: time.sleep(0.2)
    assert status(ka).status_code == 401
