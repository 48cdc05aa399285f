"""Chunking throughput and chunk-size profile on the real corpus, against a naive fixed-window baseline
measured in the same run, at the configured chunk size (default `chunk_max_chars`, the size the shipped demo
embeddings are computed for). Prints figures; asserts nothing.   python bench/chunking.py [CORPUS_DIR]"""
import statistics, sys, time
from pathlib import Path
from cragrag.core.config import load_settings
from cragrag.indexing.documents import chunk_document, load_documents

corpus = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "corpus")
W = load_settings().chunk_max_chars   # CRAGRAG_CHUNK_MAX_CHARS=800 to profile another size
t = time.perf_counter(); docs = load_documents(corpus); t_load = time.perf_counter() - t
chars = sum(len(a.text) for d in docs for a in d.articles)
t = time.perf_counter(); chunks = [c for d in docs for c in chunk_document(d, W)]; t_chunk = time.perf_counter() - t
# baseline: fixed W-character windows over each document's text (what a generic splitter does)
t = time.perf_counter()
naive = [txt[i:i + W] for d in docs for txt in ["\n".join(a.text for a in d.articles)] for i in range(0, len(txt), W)]
t_naive = time.perf_counter() - t
straddle = sum(1 for d in docs for txt in ["\n".join(f"\x00{a.text}" for a in d.articles)]
               for i in range(0, len(txt), W) if "\x00" in txt[i + 1:i + W])
sizes = [len(c.text) for c in chunks]
print(f"documents {len(docs)}, live articles {sum(len(d.articles) for d in docs)}, {chars/1e6:.2f} M chars")
print(f"load+parse {t_load*1000:.0f} ms; chunk {t_chunk*1000:.0f} ms ({chars/t_chunk/1e6:.1f} M chars/s); naive windows {t_naive*1000:.1f} ms")
print(f"article-aware (chunk_max_chars={W}): {len(chunks)} chunks, size p50 {statistics.median(sizes):.0f} / max {max(sizes)}, 0 straddle two articles")
print(f"naive {W}-char windows: {len(naive)} chunks, {straddle} ({straddle/len(naive):.0%}) straddle two articles")
