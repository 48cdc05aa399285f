"""What the question page costs: POST /answer without `explain` vs with it, and GET / (and its files), over real HTTP
to a `cragrag` server in a subprocess on the bundled demo index. Prints figures and ratios measured in one run;
asserts nothing.

    python bench/page_latency.py                    # ~40 answers each way: under a minute on 2 cores once the demo index is cached
    python bench/page_latency.py --requests 80 --trace   # more requests; traces on (as `cragrag serve` runs by default)

Each question is asked once first (warm: models loaded, query vectors cached), then the requests alternate the two
variants on the same question, so both see the same caches and the same machine load. The font is timed twice: the
first request cuts the NanumGothic subset (or reads it from ~/.cache/cragrag), the second is served from memory."""
from __future__ import annotations
import argparse, os, socket, statistics, subprocess, sys, tempfile, textwrap, time
from pathlib import Path
import httpx

QUESTIONS = ["보험계약은 언제 성립하나요?", "보험 깨면 돈 돌려받나요", "화성 이주 보험은 얼마인가요?", "보험료를 안 내면 계약이 해지되나요?",
             "보험사기를 저지르면 어떤 처벌을 받나요?", "제638조의2", "보험약관을 설명하지 않으면 어떻게 되나요?", "고지의무 위반의 효과는?",
             "해지환급금은 어떻게 계산하나요?", "보험금 청구권의 소멸시효는 몇 년인가요?"]

SERVER = textwrap.dedent("""
    import sys, uvicorn
    from cragrag.answering.pipeline import Pipeline
    from cragrag.serve.server import create_app
    trace = sys.argv[2]
    p = Pipeline(qdrant_path=":memory:", trace_enabled=trace != "-", **({"trace_dir": trace} if trace != "-" else {}), heavy_lane="thread")
    p.index(progress=False)
    p.warm()
    uvicorn.run(create_app(p, access_log=False), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    """)

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]

def line(name, xs):
    return f"{name:34s} n={len(xs):3d}  p50 {pct(xs, 50):8.1f} ms  p95 {pct(xs, 95):8.1f} ms  mean {statistics.fmean(xs):8.1f} ms"

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=40, help="answers per variant")
    ap.add_argument("--trace", action="store_true", help="write traces (off by default: the difference measured is explain's alone)")
    a = ap.parse_args()
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    work = Path(tempfile.mkdtemp(prefix="page-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRAGRAG_API_KEYS")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(work / "trace") if a.trace else "-"], env=env, cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=300) as c:
            while True:
                try: c.get("/health"); break
                except httpx.TransportError:
                    if proc.poll() is not None: sys.exit(f"server exited: {proc.stderr.read()}")
                    time.sleep(0.3)
            print(f"server up (indexed demo corpus, models warm) in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs")
            timed = lambda f: (lambda t: (f(), (time.perf_counter() - t) * 1000)[1])(time.perf_counter())

            # the page and its files
            font_cold = timed(lambda: c.get("/assets/korean-font").raise_for_status())
            font_size = len(c.get("/assets/korean-font").content)
            font_warm = [timed(lambda: c.get("/assets/korean-font").raise_for_status()) for _ in range(10)]
            page = [timed(lambda: c.get("/").raise_for_status()) for _ in range(a.requests)]
            files = {n: len(c.get(f"/assets/{n}").content) for n in ("page.css", "page.js")}
            js = [timed(lambda: c.get("/assets/page.js").raise_for_status()) for _ in range(a.requests)]

            # the answers, each question warmed once, then the two variants alternating on the same question
            for q in QUESTIONS: c.post("/answer", json={"query": q}).raise_for_status()
            plain, explained, sizes = [], [], {False: [], True: []}
            for i in range(a.requests):
                q = QUESTIONS[i % len(QUESTIONS)]
                for ex in ((False, True) if i % 2 == 0 else (True, False)):
                    t = time.perf_counter()
                    r = c.post("/answer", json={"query": q, "explain": ex}); r.raise_for_status()
                    (explained if ex else plain).append((time.perf_counter() - t) * 1000); sizes[ex].append(len(r.content))
                    assert ("explain" in r.json()) == ex
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill()

    print()
    print(line("POST /answer (no explain)", plain))
    print(line("POST /answer (explain: true)", explained))
    print(f"{'ratio explain / plain':34s}        p50 {pct(explained, 50) / pct(plain, 50):8.2f}x     p95 {pct(explained, 95) / pct(plain, 95):8.2f}x"
          f"     mean {statistics.fmean(explained) / statistics.fmean(plain):6.2f}x")
    print(f"{'response bytes, mean':34s}        plain {statistics.fmean(sizes[False]):8.0f}   explain {statistics.fmean(sizes[True]):8.0f}"
          f"   ({statistics.fmean(sizes[True]) / statistics.fmean(sizes[False]):.2f}x)")
    print()
    print(line("GET /", page))
    print(line("GET /assets/page.js", js))
    print(f"{'GET /assets/korean-font':34s} first {font_cold:8.1f} ms (cut or read from cache)   then p50 {pct(font_warm, 50):.1f} ms   {font_size / 1024:.0f} KiB")
    print(f"{'GET / p50 / answer p50 (explain)':34s}        {pct(page, 50) / pct(explained, 50):.4f}")
    print(f"{'page files':34s}        index.html + " + " + ".join(f"{n} {b / 1024:.1f} KiB" for n, b in files.items()))

if __name__ == "__main__": main()
