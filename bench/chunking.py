"""Chunking throughput and chunk-size profile on the real corpus, against a naive fixed-window baseline
measured in the same run. Prints figures; asserts nothing.   python bench/chunking.py [CORPUS_DIR]"""
import statistics, sys, time
from pathlib import Path
from cragrag.documents import chunk_document, load_documents

corpus = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "corpus")
t = time.perf_counter(); docs = load_documents(corpus); t_load = time.perf_counter() - t
chars = sum(len(a.text) for d in docs for a in d.articles)
t = time.perf_counter(); chunks = [c for d in docs for c in chunk_document(d, 800)]; t_chunk = time.perf_counter() - t
# baseline: fixed 800-character windows over each document's text (what a generic splitter does)
t = time.perf_counter()
naive = [txt[i:i + 800] for d in docs for txt in ["\n".join(a.text for a in d.articles)] for i in range(0, len(txt), 800)]
t_naive = time.perf_counter() - t
straddle = sum(1 for d in docs for txt in ["\n".join(f"\x00{a.text}" for a in d.articles)]
               for i in range(0, len(txt), 800) if "\x00" in txt[i + 1:i + 800])
sizes = [len(c.text) for c in chunks]
print(f"documents {len(docs)}, live articles {sum(len(d.articles) for d in docs)}, {chars/1e6:.2f} M chars")
print(f"load+parse {t_load*1000:.0f} ms; chunk {t_chunk*1000:.0f} ms ({chars/t_chunk/1e6:.1f} M chars/s); naive windows {t_naive*1000:.1f} ms")
print(f"article-aware: {len(chunks)} chunks, size p50 {statistics.median(sizes):.0f} / max {max(sizes)}, 0 straddle two articles")
print(f"naive 800-char windows: {len(naive)} chunks, {straddle} ({straddle/len(naive):.0%}) straddle two articles")
