"End-to-end: the README's main command and the installed entry point, in a fresh process."
import json, subprocess, sys, time

def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300, **kw)

def test_demo_command(tmp_path):
    r = run("cragrag", "demo", "--qdrant-path", str(tmp_path / "qdrant"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "demo corpus: 8 documents" in r.stdout
    assert "Q: 보험계약은 언제 성립하나요?" in r.stdout and "Q: 피자 배달 지연 보상" in r.stdout
    assert "상법 제638조의2" in r.stdout.split("Q: 피자")[0]   # the answerable sample retrieves its article

def test_default_demo_writes_under_local_folder(tmp_path):
    r = run("cragrag", "demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "qdrant: .cragrag/qdrant" in r.stdout

def test_bad_setting_is_one_clear_line(tmp_path):
    import os
    env = {**os.environ, "CRAGRAG_CRAG_ABORT_THRESHOLD": "0.9"}
    r = run("cragrag", "config", env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "must not exceed" in r.stderr

def test_config_json():
    r = run("cragrag", "config")
    assert json.loads(r.stdout)["collection"] == "cragrag"

def test_import_is_fast_and_light():
    code = "import time,sys;t=time.perf_counter();import cragrag;print(time.perf_counter()-t);print('torch' in sys.modules or 'qdrant_client' in sys.modules)"
    out = run(sys.executable, "-c", code).stdout.split()
    assert float(out[0]) < 0.5 and out[1] == "False"
