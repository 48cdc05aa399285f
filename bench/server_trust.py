"""The HTTP server under load and under abuse, loopback only, bounded in time. Prints figures; asserts nothing.

    python bench/server_trust.py                       # 60 s per level: about 5 minutes
    python bench/server_trust.py --seconds 10          # a quick run

The server is `cragrag.serve.server.create_app` under uvicorn in a subprocess on 127.0.0.1, serving the bundled demo corpus
from an Edge folder, with an API keys file (so every request pays for authentication and tenant scoping, as in
production). The clients are httpx threads of this process (they share the machine's cores with the server).

1. Load: POST /retrieve and POST /answer with real questions (the bundled golden set, cycled) from 1, 8 and 32
   concurrent clients for `--seconds` each: requests/s, p50/p95/p99 ms, errors (any non-200), and the server's RSS
   before and after (growth).
2. Flood: the p95 of a cheap request (/retrieve, top_k 5; a repeated question, and a new one) alone, then while `--flood` clients
   send expensive ones (/answer, top_k 50, a new question each time) as fast as they are answered; the ratio of the
   two p95s (aim: within 2x), and how the flood itself was served (answered, 503 with Retry-After). The flood clients
   run in their own process by default, as separate clients would (`--flood-in thread` puts them beside the timing
   client, where their response parsing also competes for the timing client's interpreter lock).

Heavy requests run where the server's settings say: by default in a worker process (`heavy_lane="process"`, see
`cragrag.serve.workers`); `CRAGRAG_HEAVY_LANE=thread python bench/server_trust.py` measures the threads of the server process
instead (an A/B of the two lanes). The lane in use is printed at the start.

Diagnosis switches (environment): SRVTIME=1 prints the server's own time for each /retrieve (arrival to last byte);
SWI=0.0005 sets the server's interpreter switch interval; NOPAUSE=1 turns off the heavy lane's giving way and lower
priority (an A/B of `LightFirst` and `heavy_pool`)."""
import argparse, json, os, socket, subprocess, sys, tempfile, threading, time
from pathlib import Path
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=60.0, help="seconds per load level")
ap.add_argument("--levels", default="1,8,32")
ap.add_argument("--flood", type=int, default=16, help="clients sending expensive requests during the flood")
ap.add_argument("--cheap", type=int, default=200, help="cheap requests timed alone and under the flood")
ap.add_argument("--flood-in", choices=("process", "thread"), default="process",
                help="where the flood clients run: their own process (as separate clients would), or threads beside the timing client")
ap.add_argument("--serve", help=argparse.SUPPRESS); ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
ap.add_argument("--flood-client", nargs=3, metavar=("URL", "KEY", "OUT"), help=argparse.SUPPRESS)
a = ap.parse_args()

def rss_mb(pid) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
    return float("nan")

if a.serve:   # the server process
    import uvicorn
    from cragrag.answering.pipeline import Pipeline
    from cragrag.serve.server import create_app
    work = Path(a.serve)
    p = Pipeline(qdrant_path=work / "edge", trace_dir=work / "trace", api_keys_file=work / "keys.json")
    p.warm()
    if os.environ.get("SWI"): sys.setswitchinterval(float(os.environ["SWI"]))
    if os.environ.get("NOPAUSE"):   # A/B: heavy work neither gives way nor runs at a lower priority
        import cragrag.serve.server as S
        S.LightFirst.pause = lambda self: None; S.lower_priority = lambda nice=10: None
    app = create_app(p)
    if os.environ.get("SRVTIME"):   # diagnosis: the server's own time for each cheap /retrieve, arrival to last byte
        inner = app
        async def app(scope, receive, send):
            t = time.perf_counter()
            await inner(scope, receive, send)
            if scope.get("path") == "/retrieve": print(f"srv retrieve {1000 * (time.perf_counter() - t):.1f} ms", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning", access_log=False)
    sys.exit()

import httpx

def flood(url, headers, qs, n, stop, codes, lock):
    "n client threads sending /answer top_k 50 (a new question each time) until `stop` is set; status codes into `codes`."
    def flooder(i):
        with httpx.Client(timeout=120) as cl:
            j = i
            while not stop.is_set():
                try: code = cl.post(f"{url}/answer", json={"query": f"{qs[j % len(qs)]} ({i}-{j})", "top_k": 50}, headers=headers).status_code
                except httpx.HTTPError as e: code = type(e).__name__
                with lock: codes.append(code)
                if code == 503: time.sleep(0.2)        # a client that honours Retry-After, roughly
                j += n
    ths = [threading.Thread(target=flooder, args=(i,)) for i in range(n)]
    for t in ths: t.start()
    return ths

if a.flood_client:   # the flood's own process: runs until stdin closes, then writes its status codes
    from cragrag.evaluate.eval import bundled_golden
    url, key, out = a.flood_client
    stop, codes, lock = threading.Event(), [], threading.Lock()
    ths = flood(url, {"Authorization": f"Bearer {key}"}, [q.question for q in bundled_golden()], a.flood, stop, codes, lock)
    sys.stdin.read(); stop.set()
    for t in ths: t.join()
    Path(out).write_text(json.dumps([str(c) for c in codes])); sys.exit()

from cragrag.serve.auth import KeyRing, save_keys
from cragrag.evaluate.eval import bundled_golden
from cragrag.answering.pipeline import Pipeline

def pct(xs, q): return float(np.percentile(xs, q)) if len(xs) else float("nan")
work = Path(tempfile.mkdtemp(prefix="cragrag-bench-"))
ring = KeyRing(); key, _ = ring.add("bench"); save_keys(ring, work / "keys.json")
print("indexing the demo corpus for tenant 'bench' ...", flush=True)
with Pipeline(qdrant_path=work / "edge", trace_enabled=False) as p: p.for_tenant("bench").index(progress=False)
with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
url, H = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {key}"}
proc = subprocess.Popen([sys.executable, __file__, "--serve", str(work), "--port", str(port)])
qs = [q.question for q in bundled_golden()]

def post(cl, ep, body):
    t = time.perf_counter()
    try: r = cl.post(f"{url}/{ep}", json=body, headers=H); code = r.status_code
    except httpx.HTTPError as e: code = type(e).__name__
    return code, (time.perf_counter() - t) * 1000

def level(ep, conc, seconds):
    lat, errs, lock, go = [], [], threading.Lock(), threading.Event()
    def worker(i):
        with httpx.Client(timeout=120) as cl:
            go.wait(); j = i
            while time.perf_counter() < t0 + seconds:
                code, ms = post(cl, ep, {"query": qs[j % len(qs)]})
                with lock: (lat.append(ms) if code == 200 else errs.append(code))
                j += conc
    ths = [threading.Thread(target=worker, args=(i,)) for i in range(conc)]
    for t in ths: t.start()
    t0 = time.perf_counter(); go.set()
    for t in ths: t.join()
    wall = time.perf_counter() - t0
    return len(lat) / wall, pct(lat, 50), pct(lat, 95), pct(lat, 99), errs

try:
    t0 = time.perf_counter()
    while True:
        if proc.poll() is not None: sys.exit(f"the server exited with code {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200: break
        except httpx.HTTPError: pass
        time.sleep(0.5)
    print(f"server up in {time.perf_counter() - t0:.1f} s; RSS {rss_mb(proc.pid):.0f} MB", flush=True)
    with httpx.Client(timeout=120) as cl:
        assert post(cl, "retrieve", {"query": qs[0]})[0] == 200, "the key was not accepted"
        r = cl.post(f"{url}/retrieve", json={"query": qs[0]}); print(f"no key: HTTP {r.status_code}")
        print(f"heavy requests: {cl.get(url + '/health', headers=H).json().get('heavy_lane')}")
    rss0 = rss_mb(proc.pid)
    print(f"\n1. load, {a.seconds:g} s per level (real questions, cycled)")
    print(f"{'endpoint':10s} {'clients':>7s} {'req/s':>7s} {'p50 ms':>7s} {'p95 ms':>7s} {'p99 ms':>7s} {'errors':>6s}")
    for ep in ("retrieve", "answer"):
        for c in [int(x) for x in a.levels.split(",") if x]:
            rps, p50, p95, p99, errs = level(ep, c, a.seconds)
            print(f"{ep:10s} {c:7d} {rps:7.1f} {p50:7.0f} {p95:7.0f} {p99:7.0f} {len(errs):6d} {sorted(set(map(str, errs))) if errs else ''}", flush=True)
    rss1 = rss_mb(proc.pid)
    print(f"server RSS {rss0:.0f} MB before the load, {rss1:.0f} MB after: growth {rss1 - rss0:+.0f} MB")

    print(f"\n2. flood: {a.flood} clients sending /answer top_k 50 (new questions) while one client times /retrieve top_k 5")
    def cheap_body(kind, i):   # a popular question (its vector cached by the server) or a new one (embedded)
        return {"query": "보험계약은 언제 성립하나요?" if kind == "repeated" else f"{qs[hash(i) % len(qs)]} [{i}]", "top_k": 5}
    def time_cheap(kind, tag):
        with httpx.Client(timeout=120) as cl: return [post(cl, "retrieve", cheap_body(kind, f"{tag}{i}")) for i in range(a.cheap)]
    time_cheap("repeated", "w")
    alone = {k: [ms for code, ms in time_cheap(k, "a") if code == 200] for k in ("repeated", "new")}
    stop, flood_codes, lock = threading.Event(), [], threading.Lock()
    if a.flood_in == "process":
        codes_file = work / "flood_codes.json"
        fl = subprocess.Popen([sys.executable, __file__, "--flood", str(a.flood), "--flood-client", url, key, str(codes_file)], stdin=subprocess.PIPE)
    else: ths = flood(url, H, qs, a.flood, stop, flood_codes, lock)
    time.sleep(3)
    under = {k: time_cheap(k, "f") for k in ("repeated", "new")}
    if a.flood_in == "process":
        fl.stdin.close(); fl.wait(120); flood_codes = json.loads(codes_file.read_text())
    else:
        stop.set()
        for t in ths: t.join()
    print(f"(flood clients in their own {a.flood_in})")
    for k in ("repeated", "new"):
        ok = [ms for code, ms in under[k] if code == 200]
        print(f"cheap /retrieve, {k} question: alone p50 {pct(alone[k], 50):.0f} / p95 {pct(alone[k], 95):.0f} ms; under the flood "
              f"p50 {pct(ok, 50):.0f} / p95 {pct(ok, 95):.0f} ms ({len(ok)}/{len(under[k])} answered); p95 ratio {pct(ok, 95) / pct(alone[k], 95):.2f}x (aim: within 2x)")
    from collections import Counter
    print(f"flood requests: {dict(Counter(map(str, flood_codes)))}")
finally:
    proc.terminate(); proc.wait(30)
