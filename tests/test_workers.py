"""Heavy requests in worker processes (`cragrag.serve.workers`), end to end over the HTTP app: answers in the worker are
the server's answers, a tenant sees only its chunks there too, a dead worker is a 503 and is replaced, the copy of
the index goes when the server stops, and a server script without a `__main__` guard is not run twice."""
import os, subprocess, sys, textwrap
from importlib.resources import files
from pathlib import Path
import pytest
from fastapi.testclient import TestClient
from cragrag.serve.auth import KeyRing
from cragrag.answering.pipeline import Pipeline
from cragrag.serve.server import create_app

CORPUS = Path(str(files("cragrag") / "corpus"))
LAWS = {"fraud": CORPUS / "legalize-kr" / "보험사기방지특별법_법률.md",
        "nuclear": CORPUS / "regulate-kr" / "원자력손해배상보상계약_약관_고시.md",
        "table": CORPUS / "regulate-kr" / "보험업감독규정_별표1.md"}
TENANTS = {"team-a": ["fraud", "nuclear"], "team-b": ["fraud"], "team-c": ["table"]}
QUERIES = ["보험사기를 저지르면 어떤 처벌을 받나요?", "원자력 손해 배상 보상계약의 보상금", "보험사기방지 특별법 제8조", "별표 1 내용"]

@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    "An Edge index holding three tenants' documents (one law in two tenants)."
    work = tmp_path_factory.mktemp("lane")
    p = Pipeline(qdrant_path=work / "edge", trace_dir=work / "trace")
    for t, laws in TENANTS.items(): p.for_tenant(t).index([LAWS[x] for x in laws], progress=False)
    yield p
    p.close()

def test_heavy_requests_run_in_a_worker_and_stay_in_their_tenant(edge):
    ring = KeyRing(); keys = {t: ring.add(t)[0] for t in TENANTS}
    with TestClient(create_app(edge, keys=ring)) as api:
        auth = lambda t: {"Authorization": f"Bearer {keys[t]}"}
        assert api.get("/health", headers=auth("team-a")).json()["heavy_lane"] == "process (1 worker)"
        lane = api.app.state.heavy_lane
        for t in TENANTS:
            for q in QUERIES:
                for ep, body in (("retrieve", {"query": q, "top_k": 30}), ("answer", {"query": q, "top_k": 20, "multi_query": True})):
                    r = api.post(f"/{ep}", json=body, headers=auth(t))
                    assert r.status_code == 200, r.text
                    assert {s["metadata"]["tenant"] for s in r.json()["sources"]} <= {t}
        assert api.post("/retrieve", json={"query": "보험사기", "top_k": 30}).status_code == 401   # keys before any worker
        workers = lane._state["workers"]
        assert len(workers) == 1 and workers[0].pid != os.getpid() and workers[0].alive
        copy = lane._state["copy"]
        assert copy.parent == edge.store.path and copy.exists()
    assert not copy.exists() and not workers                        # stopped with the server

def test_a_dead_worker_is_a_503_then_replaced(edge):
    with TestClient(create_app(edge)) as api:
        body = {"query": "보험사기를 저지르면 어떤 처벌을 받나요?", "top_k": 30}
        first = api.post("/retrieve", json=body)
        w = api.app.state.heavy_lane._state["workers"][0]
        w.proc.kill(); w.proc.wait()
        r = api.post("/retrieve", json=body)
        assert (r.status_code, r.headers.get("retry-after"), "worker process" in r.text) == (503, "2", True)
        again = api.post("/retrieve", json=body)
        assert again.status_code == 200
        assert [s["chunk_id"] for s in again.json()["sources"]] == [s["chunk_id"] for s in first.json()["sources"]]
        assert api.app.state.heavy_lane._state["workers"][0].pid != w.pid

def test_the_thread_lane_is_a_setting(edge):
    p = Pipeline(edge.settings, store=edge.store, heavy_lane="thread", trace_enabled=False)
    with TestClient(create_app(p)) as api:
        assert api.get("/health").json()["heavy_lane"] == "thread (settings.heavy_lane is 'thread')"
        assert api.post("/retrieve", json={"query": "보험사기 처벌", "top_k": 30}).status_code == 200
        assert api.app.state.heavy_lane is None

def test_a_script_without_a_main_guard_runs_once(edge, tmp_path):
    "multiprocessing's spawn would import the script again in each worker; the lane's workers never do."
    script = tmp_path / "serve_it.py"
    script.write_text(textwrap.dedent(f"""
        from fastapi.testclient import TestClient
        from cragrag.answering.pipeline import Pipeline
        from cragrag.serve.server import create_app
        print("script body ran", flush=True)
        p = Pipeline(qdrant_path={str(tmp_path / "edge")!r}, trace_enabled=False)
        p.index([{str(LAWS["fraud"])!r}], progress=False)
        with TestClient(create_app(p)) as api:
            r = api.post("/retrieve", json={{"query": "보험사기 처벌", "top_k": 30}})
            print("status", r.status_code, api.app.state.heavy_lane.mode, flush=True)
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("script body ran") == 1 and "status 200 process (1 worker)" in out.stdout

def test_two_workers_answer_side_by_side_each_on_its_own_copy(edge):
    import json, threading
    from cragrag.serve.workers import WorkerLane
    lane = WorkerLane(edge, n=2)
    try:
        body = json.dumps({"query": "보험사기를 저지르면 어떤 처벌을 받나요?", "top_k": 30})
        outs, errs = [], []
        def ask():
            try: outs.append(lane.run("team-b", "retrieve", body))
            except Exception as e: errs.append(e)
        ths = [threading.Thread(target=ask) for _ in range(4)]
        for t in ths: t.start()
        for t in ths: t.join()
        assert not errs and [o[0] for o in outs] == [200] * 4
        assert len({json.dumps([s["chunk_id"] for s in json.loads(o[2])["sources"]]) for o in outs}) == 1   # one answer
        ws = lane._state["workers"]
        assert len({w.pid for w in ws}) == 2 and len({w.index_dir for w in ws}) == 2 and all(w.alive for w in ws)
    finally: lane.close()
    assert not lane._state["workers"]
