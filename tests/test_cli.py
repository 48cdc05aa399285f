"End-to-end: the README's main command and the installed entry point, in a fresh process."
import json, os, subprocess, sys

def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=900, **kw)   # a safety net for a hung process, not a speed check: a loaded machine indexes slowly

def test_demo_command(tmp_path):
    r = run("cragrag", "demo", "--qdrant-path", str(tmp_path / "qdrant"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "demo corpus: 8 documents" in r.stdout
    assert "Q: 보험계약은 언제 성립하나요?" in r.stdout and "Q: 피자 배달 지연 보상" in r.stdout
    q1, q2, q3 = r.stdout.split("\nQ: ")[1:]
    assert "상법 제638조의2" in q1 and "answer (extractive):" in q1   # the answerable sample retrieves and cites its article
    assert "model loading: " in q1 and "model loading: " not in q2 + q3   # loading is paid once, reported on its own line
    assert "refused (" in q2 and "the rewritten query that found the sources" in q3

def test_default_demo_writes_under_local_folder(tmp_path):
    r = run("cragrag", "demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "qdrant: .cragrag/qdrant" in r.stdout

def test_bad_setting_is_one_clear_line(tmp_path):
    env = {**os.environ, "CRAGRAG_CRAG_ABORT_THRESHOLD": "0.9"}
    r = run("cragrag", "config", env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "must not exceed" in r.stderr and r.stderr.startswith("cragrag: ") and len(r.stderr.splitlines()) == 1

def test_config_json():
    r = run("cragrag", "config")
    assert json.loads(r.stdout)["collection"] == "cragrag"

def test_index_of_an_empty_folder_writes_nothing(tmp_path):
    (tmp_path / "docs").mkdir()
    r = run("cragrag", "index", "docs", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("cragrag: found no documents in docs") and len(r.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]

MODEL_LIBRARIES = {"qdrant_client", "kiwipiepy", "numpy", "torch", "openai"}

def imported(*args, **kw):
    "The process of `args` and the top-level modules it imported (Python's -X importtime report, on stderr)."
    r = run(*args, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}, **kw)
    return r, {l.split("|")[-1].strip().split(".")[0] for l in r.stderr.splitlines() if l.startswith("import time:")}

def test_import_and_help_load_no_model_library():
    r, mods = imported(sys.executable, "-c", "import cragrag")
    assert r.returncode == 0 and "cragrag" in mods and not mods & MODEL_LIBRARIES
    r, mods = imported("cragrag", "--help")
    assert r.returncode == 0 and "cragrag.cli" in r.stderr and "demo" in r.stdout
    assert not mods & (MODEL_LIBRARIES | {"pydantic_settings", "pydantic", "fastapi"}), mods

def test_light_commands_load_no_model_library(tmp_path):
    for args in [("config",), ("chunks", "--limit", "1"), ("trace-summary", "--dir", str(tmp_path))]:
        r, mods = imported("cragrag", *args)
        assert r.returncode == 0, r.stderr[-2000:]
        assert not mods & MODEL_LIBRARIES, (args, mods & MODEL_LIBRARIES)

def test_eval_and_calibrate_on_a_users_folder_and_golden_file(tmp_path):
    "`cragrag eval` and `cragrag calibrate` as the README shows them: the user's documents, the user's golden file."
    from importlib.resources import files
    docs = tmp_path / "my_terms"; docs.mkdir()
    src = files("cragrag") / "corpus" / "legalize-kr" / "보험사기방지특별법_법률.md"
    (docs / "보험사기방지특별법_법률.md").write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    rows = [json.loads(l) for l in (files("cragrag") / "data" / "golden_bundled.jsonl").read_text(encoding="utf-8").splitlines()]
    mine = [r for r in rows if any(g["doc"] == "보험사기방지특별법_법률" for g in r["gold"])][:8] + [r for r in rows if r["category"] == "out_of_corpus"][:8]
    (tmp_path / "my_golden.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mine), encoding="utf-8")
    r = run("cragrag", "eval", "--docs", "my_terms", "--golden", "my_golden.jsonl", "--qdrant-path", "q", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "16 questions, 20 chunks indexed" in r.stdout and "R@5" in r.stdout, r.stdout
    run_dir = next((tmp_path / "cragrag-eval").iterdir())
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "refusal recall" in report and "## By category" in report and "![scores.png](scores.png)" in report
    (tmp_path / "answerable.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mine[:8]), encoding="utf-8")
    (tmp_path / "ooc.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mine[8:]), encoding="utf-8")
    r = run("cragrag", "calibrate", "--golden", "answerable.jsonl", "--golden", "ooc.jsonl", "--qdrant-path", "q", "--out", "calib", cwd=tmp_path)
    assert r.returncode == 2 and "8 answerable and 8 unanswerable questions: at least 20 of each" in r.stderr, r.stderr   # too few to record
    assert not (tmp_path / "calib").exists()
    r = run("cragrag", "calibrate", "--golden", "answerable.jsonl", "--golden", "ooc.jsonl", "--qdrant-path", "q", "--out", "calib", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr      # two files combined: your questions and out-of-corpus ones; recorded because asked to
    assert "8 answerable, 8 unanswerable questions; 20 chunks" in r.stdout and "crag_score_threshold = " in r.stdout, r.stdout
    assert sorted(p.name for p in (tmp_path / "calib").iterdir()) == ["calibration.json", "scores.png"]
    r = run("cragrag", "eval", "--golden", "my_golden.jsonl", "--qdrant-path", "q", "--quiet", "--no-answers",
            "--compare", str(run_dir / "run.json"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    newest = next(d for d in (tmp_path / "cragrag-eval").iterdir() if d != run_dir)
    assert "## Against " + run_dir.name in (newest / "report.md").read_text(encoding="utf-8")

def test_calibrate_on_probes_without_labels(tmp_path):
    "`cragrag calibrate --probes`: a user's documents and no golden file; the fit is recorded as made on probes."
    from importlib.resources import files
    docs = tmp_path / "my_laws"; docs.mkdir()
    for name in ("보험사기방지특별법_법률.md", "상법_법률.md"):
        (docs / name).write_text((files("cragrag") / "corpus" / "legalize-kr" / name).read_text(encoding="utf-8"), encoding="utf-8")
    r = run("cragrag", "calibrate", "--probes", "--golden", "x.jsonl", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 2 and "leave out --golden" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    r = run("cragrag", "calibrate", "--probes", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 2 and "the index is empty" in r.stderr, r.stderr
    r = run("cragrag", "calibrate", "--probes", "--docs", "my_laws", "--qdrant-path", "q", "--out", "calib", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("gate fitted on ") and " probes (" in first and "AUC" in first, r.stdout
    assert "crag_score_threshold = " in r.stdout
    cal = json.loads((tmp_path / "calib" / "calibration.json").read_text(encoding="utf-8"))
    assert cal["source"] == "probes" and cal["n_pos"] > 20 and cal["n_neg"] > 50 and 0 < cal["pass_threshold"] <= 1
    r = run("cragrag", "calibrate", "--check", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 0 and "on probes" in r.stdout, r.stdout

def test_index_fits_the_gate_to_a_users_documents(tmp_path):
    "`cragrag index` on a user's laws fits the gate on probes and records it; `ask` gates with that line; explicit settings and --no-fit-gate win."
    import re
    from importlib.resources import files
    docs = tmp_path / "my_laws"; docs.mkdir()
    for name in ("보험사기방지특별법_법률.md", "보험업법_법률.md"):
        (docs / name).write_text((files("cragrag") / "corpus" / "legalize-kr" / name).read_text(encoding="utf-8"), encoding="utf-8")
    r = run("cragrag", "index", "my_laws", "--quiet", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = re.search(r"gate fitted on (\d+) probes .* pass ≥ ([0-9.]+), refuse < ([0-9.]+), AUC", r.stdout)
    assert m and int(m[1]) > 100 and 0 < float(m[3]) <= float(m[2]) <= 0.5, r.stdout
    def gated(q, **env):
        e = {**os.environ, "CRAGRAG_TRACE_DIR": str(tmp_path / "trace"), **env}
        out = run("cragrag", "ask", q, "--json", "--qdrant-path", "q", cwd=tmp_path, env=e)
        assert out.returncode == 0, out.stderr
        recs = [json.loads(l) for f in sorted((tmp_path / "trace").rglob("*.jsonl")) for l in f.read_text(encoding="utf-8").splitlines()]
        return json.loads(out.stdout), recs[-1]["settings"]
    ans, s = gated("보험사기로 보험금을 받으면 어떤 처벌을 받나요?")
    assert abs(s["crag_score_threshold"] - float(m[2])) < 1e-3 and not ans["is_refusal"], (s, ans["refusal_reason"])
    _, s = gated("보험사기로 보험금을 받으면 어떤 처벌을 받나요?", CRAGRAG_CRAG_SCORE_THRESHOLD="0.3")
    assert s["crag_score_threshold"] == 0.3                                   # an explicit threshold wins
    r = run("cragrag", "calibrate", "--check", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 0 and " on probes, " in r.stdout, r.stdout

def test_index_with_a_model_writes_the_probes_once(tmp_path):
    "With a model configured, `cragrag index` fits the gate on questions the model writes (one request per sampled article), says what that cost, and a second run asks about nothing it asked before."
    import re
    from importlib.resources import files
    from cragrag.testing.judge_replies import judge_responder
    from cragrag.testing.scripted import ScriptedLLMServer
    docs = tmp_path / "my_laws"; docs.mkdir()
    name = "보험업법_법률.md"
    (docs / name).write_text((files("cragrag") / "corpus" / "legalize-kr" / name).read_text(encoding="utf-8"), encoding="utf-8")
    with ScriptedLLMServer(responder=judge_responder) as srv:
        env = {**os.environ, "CRAGRAG_LLM": "openai", "CRAGRAG_LLM_BASE_URL": srv.url, "CRAGRAG_LLM_MODEL": "scripted",
               "CRAGRAG_LLM_API_KEY": "x", "CRAGRAG_GATE_PROBE_BUDGET": "15"}
        r = run("cragrag", "index", "my_laws", "--quiet", "--qdrant-path", "q", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        assert "questions written by openai:scripted: 15 requests" in r.stdout and "0 of 15 articles from the cache" in r.stdout, r.stdout
        assert len(srv.requests) == 15 and all(q["messages"][-1]["content"].count("<자료>\n") == 1 for q in srv.requests)
        r = run("cragrag", "index", "my_laws", "--quiet", "--qdrant-path", "q", cwd=tmp_path, env=env)   # nothing changed: re-fitted from the cache
        assert r.returncode == 0 and "0 requests" in r.stdout and "15 of 15 articles from the cache" in r.stdout, r.stdout
        assert len(srv.requests) == 15
    r = run("cragrag", "calibrate", "--check", "--qdrant-path", "q", cwd=tmp_path)
    assert r.returncode == 0 and " on probes written by openai:scripted, " in r.stdout, r.stdout
