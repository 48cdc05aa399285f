"""The server under the attacks of the budgets-and-keys review, over real HTTP to a `cragrag` server in a subprocess:
a 300 MB chunked body (with and without a key) is never buffered, slow-drip senders hold no place, a flood of heavy
requests leaves cheap ones served, a revoked key stops working without a restart, an expired key is refused, and the
access log holds who asked, never the key or the question. Behaviour only: status codes, and memory measured loosely."""
import json, os, socket, subprocess, sys, textwrap, threading, time
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path
import httpx, psutil, pytest
from conftest import _wait_until_serving
from cragrag.serve.auth import KeyRing, load_keys, save_keys

LAW = Path(str(files("cragrag") / "corpus")) / "legalize-kr" / "보험사기방지특별법_법률.md"
SERVER = textwrap.dedent("""
    import sys
    from cragrag.answering.pipeline import Pipeline
    from cragrag.serve.server import serve
    p = Pipeline(qdrant_path=":memory:", trace_dir=sys.argv[2], heavy_lane="thread")
    p.index([sys.argv[3]], progress=False)
    serve("127.0.0.1", int(sys.argv[1]), p)
    """)
PLACES = 4                                                    # settings.max_pending_requests of the server under test
QUERY = {"query": "보험사기를 저지르면 어떤 처벌을 받나요?"}

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    "A keyed server in a subprocess: its process, base URL, keys file, trace folder, log file, and a key per tenant."
    work = tmp_path_factory.mktemp("hardening")
    ring = KeyRing(); keys = {t: ring.add(t)[0] for t in ("team-a", "team-b")}
    keyfile = save_keys(ring, work / "keys.json")
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    env = {**os.environ, "CRAGRAG_API_KEYS_FILE": str(keyfile), "CRAGRAG_MAX_PENDING_REQUESTS": str(PLACES)}
    log = (work / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(work / "trace"), str(LAW)], env=env, cwd=work,
                            stdout=log, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        proc.stdout = (work / "server.log").open()             # (what wait_until_serving shows if the server exits)
        _wait_until_serving(proc, base)
        yield {"proc": proc, "base": base, "port": port, "keyfile": keyfile, "trace": work / "trace", "log": work / "server.log", "keys": keys}
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()

def _auth(key): return {"Authorization": f"Bearer {key}"}

def _raw(port: int, head: str, body_chunks, read_timeout: float = 120) -> tuple[int | None, int]:
    "Send a request by hand (headers, then each chunk of `body_chunks`) while reading the answer: (status or None, bytes sent)."
    sock = socket.create_connection(("127.0.0.1", port)); sock.settimeout(read_timeout)
    got, sent = bytearray(), 0
    def read():
        try:
            while (b := sock.recv(65536)): got.extend(b)
        except OSError: pass
    reader = threading.Thread(target=read); reader.start()
    try:
        sock.sendall(head.encode())
        for c in body_chunks: sock.sendall(c); sent += len(c)
    except OSError: pass                                      # the server closed the connection: it stopped reading
    reader.join(read_timeout); sock.close()
    return (int(got.split()[1]) if got.startswith(b"HTTP/") else None), sent

def _head(extra: dict, path: str = "/retrieve") -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: test", "Content-Type: application/json"] + [f"{k}: {v}" for k, v in extra.items()]
    return "\r\n".join(lines) + "\r\n\r\n"

def _chunked(total: int, size: int = 1 << 20):
    piece = f"{size:x}\r\n".encode() + b"x" * size + b"\r\n"
    for _ in range(total // size): yield piece
    yield b"0\r\n\r\n"

class PeakRSS:
    "The largest resident memory of a process while the block runs (sampled every 20 ms)."
    def __init__(self, pid): self.p, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()
    def _watch(self):
        while not self._stop.is_set(): self.peak = max(self.peak, self.p.memory_info().rss); time.sleep(0.02)
    def __enter__(self):
        self.before = self.p.memory_info().rss; self.t = threading.Thread(target=self._watch); self.t.start(); return self
    def __exit__(self, *exc): self._stop.set(); self.t.join()

def test_a_300_mb_chunked_body_is_never_buffered(server):
    "Finding (a): a chunked body was read whole before the size check, and before the key was checked (+511 MB)."
    total = 300 << 20
    with PeakRSS(server["proc"].pid) as rss:
        no_key = _raw(server["port"], _head({"Transfer-Encoding": "chunked"}), _chunked(total))
        keyed = _raw(server["port"], _head({"Transfer-Encoding": "chunked", "X-API-Key": server["keys"]["team-a"]}), _chunked(total))
    assert (no_key[0], keyed[0]) == (401, 413)
    assert no_key[1] < total and keyed[1] < total             # the server stopped reading: the client could not send it all
    assert rss.peak - rss.before < 100 << 20                  # loosely: nothing like the body was held
    assert httpx.post(f"{server['base']}/retrieve", json=QUERY, headers=_auth(server["keys"]["team-a"]), timeout=120).status_code == 200

def test_slow_drip_senders_hold_no_place(server):
    "Finding (b): 40 slow senders took every request place (and the keyless ones were never refused)."
    def drip(key):
        hdr = {"Content-Length": "200"} | ({"X-API-Key": key} if key else {})
        return _raw(server["port"], _head(hdr), (b" " for _ in range(200) if not time.sleep(0.5)))[0]
    with ThreadPoolExecutor(40) as ex:
        keyless = [ex.submit(drip, None) for _ in range(20)]
        keyed = [ex.submit(drip, server["keys"]["team-b"]) for _ in range(20)]   # 5× the places, all of them mid-body
        time.sleep(2)
        served = [httpx.post(f"{server['base']}/retrieve", json=QUERY, headers=_auth(server["keys"]["team-a"]), timeout=120).status_code
                  for _ in range(15)]
        assert served == [200] * 15
        assert [f.result() for f in keyless] == [401] * 20    # refused from the headers, body unread
        assert [f.result() for f in keyed] == [408] * 20      # settings.body_read_timeout_s: closed, not kept open

def test_a_heavy_flood_leaves_cheap_requests_served(server):
    "Finding (c): heavy requests waiting for their lane held the shared places: cheap cached requests got 503."
    stop, heavy_codes = threading.Event(), []
    def flood():
        with httpx.Client(timeout=120) as c:
            while not stop.is_set():
                heavy_codes.append(c.post(f"{server['base']}/answer", json={**QUERY, "top_k": 20}, headers=_auth(server["keys"]["team-a"])).status_code)
    ths = [threading.Thread(target=flood) for _ in range(40)]
    for t in ths: t.start()
    try:
        while len(heavy_codes) < 40: time.sleep(0.05)         # the flood is on: the heavy places are full
        with httpx.Client(timeout=120) as c:
            cheap = [c.post(f"{server['base']}/retrieve", json=QUERY, headers=_auth(server["keys"]["team-a"])).status_code for _ in range(30)]
    finally:
        stop.set()
        for t in ths: t.join()
    assert cheap == [200] * 30
    assert 503 in heavy_codes and 200 in heavy_codes           # the heavy ones queued apart (and the overflow was told to retry)

def _until(cond, give_up: float = 30.0) -> bool:
    "Poll `cond` until it holds (the server looks at the keys file at most once a second); False if it never does."
    end = time.monotonic() + give_up
    while not cond():
        if time.monotonic() > end: return False
        time.sleep(0.2)
    return True

def test_revoke_and_add_take_effect_without_a_restart(server, tmp_path):
    "Finding (d): `cragrag keys revoke` left the key working until the server restarted."
    cli = str(Path(sys.executable).parent / "cragrag")
    out = subprocess.run([cli, "keys", "add", "--tenant", "team-a", "--file", str(server["keyfile"])], capture_output=True, text=True, timeout=120)
    key, kid = out.stdout.split()[0], out.stdout.split("(key ")[1].split()[0]
    status = lambda k: httpx.post(f"{server['base']}/retrieve", json=QUERY, headers=_auth(k), timeout=120).status_code
    assert _until(lambda: status(key) == 200)                  # a new key works without a restart
    subprocess.run([cli, "keys", "revoke", kid, "--file", str(server["keyfile"])], check=True, capture_output=True, timeout=120)
    assert _until(lambda: status(key) == 401)                  # and a revoked one stops
    good = server["keyfile"].read_text()
    server["keyfile"].write_text('{"keys": [')                 # a broken hand edit: the last good keys stay in force
    try:
        assert _until(lambda: status(server["keys"]["team-a"]) == 200 and "not reloaded" in server["log"].read_text())
        assert status(server["keys"]["team-a"]) == 200 and server["proc"].poll() is None
        assert server["log"].read_text().count("not reloaded") == 1   # one line, not one per request
    finally: server["keyfile"].write_text(good)

def test_an_expired_key_is_refused_without_naming_its_tenant(server):
    "Finding (e): keys had no expiry."
    ring = load_keys(server["keyfile"])
    key, e = ring.add("team-b", expires="2099-01-31")
    e["expires"] = "2020-01-31T00:00:00Z"                      # (its day has passed)
    save_keys(ring, server["keyfile"])
    r = None
    def refused():
        nonlocal r
        r = httpx.post(f"{server['base']}/retrieve", json=QUERY, headers=_auth(key), timeout=120)
        return "expired" in r.text                             # (until the server reads the file: an unknown key)
    assert _until(refused) and r.status_code == 401
    assert "expired" in r.json()["detail"] and "team-b" not in r.text and r.headers.get("www-authenticate") == "Bearer"

def test_the_access_log_says_who_never_the_key_or_the_question(server):
    "Finding (f): nothing recorded who asked what."
    key = server["keys"]["team-a"]
    pii = "010-2345-6789"
    httpx.post(f"{server['base']}/answer", json={"query": f"보험사기 신고 전화 {pii} 로 하면 되나요?"}, headers=_auth(key), timeout=120)
    httpx.get(f"{server['base']}/{pii}", headers=_auth(key), timeout=30)        # personal data in a path
    log = server["trace"] / "access.jsonl"
    assert _until(lambda: log.exists() and log.read_text(encoding="utf-8").count("\n") >= 2, 10)
    text = log.read_text(encoding="utf-8")
    recs = [json.loads(line) for line in text.splitlines()]
    mine = [r for r in recs if r["route"] == "/answer" and r["status"] == 200]
    assert mine and mine[-1]["tenant"] == "team-a" and mine[-1]["key_id"].startswith("k_") and mine[-1]["bytes_in"] > 0
    assert {"ts", "key_id", "tenant", "route", "status", "ms", "bytes_in"} <= set(recs[-1])
    assert all(k not in text for k in server["keys"].values())                 # never a key
    assert pii not in text and "보험사기 신고" not in text                        # never the question, nor personal data
    assert any(r["status"] == 401 and r["key_id"] is None for r in recs)        # the refused callers are there too
