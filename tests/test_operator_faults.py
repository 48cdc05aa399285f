"""Operator faults give clear errors ("Trust boundaries", findings 6, 7, 8, 10), on the installed `cragrag` command:
a damaged or foreign index is one `cragrag: ...` line and exit status 2, never a traceback; an index run killed
midway leaves an index that says it is incomplete, warns once when used and is completed by running again; a
symlink out of the folder is not followed; one bad file is skipped (or with --strict stops the run); a second
`cragrag index` on a held folder fails before parsing anything. A large file is chunked in linear work: an 8 MB file
of one line (one article) read its whole text for every chunk (289 s); the tests count what is read, never time it."""
import json, os, shutil, signal, socket, subprocess, sys, warnings
from pathlib import Path
import pytest
import cragrag
from cragrag.indexing.documents import demo_corpus_dir
from cragrag.indexing.build import index_status
from cragrag.indexing.store import EdgeStore, StoreCorrupt

SMALL = ["legalize-kr/보험사기방지특별법_법률.md", "regulate-kr/보험업감독규정_별표14.md", "regulate-kr/보험업감독규정_별표15.md"]
DAMAGED = "is damaged or not a cragrag index ("

def run(*args, cwd, env=None, timeout=300):
    "`cragrag *args` in a fresh process (its traces and default index under `cwd`)."
    return subprocess.run(["cragrag", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, **(env or {})})

def docs_folder(where: Path, files=SMALL) -> Path:
    "A folder with copies of some files of the bundled corpus."
    where.mkdir(parents=True, exist_ok=True)
    for f in files: (where / Path(f).name).write_bytes((demo_corpus_dir() / f).read_bytes())
    return where

def one_line(r, starts: str):
    "The command failed with status 2 and exactly one stderr line starting with `starts` (no traceback, no panic)."
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(starts), r.stderr

def doc_ids(q: Path) -> set[str]:
    with EdgeStore(q, "cragrag") as st: return {p["doc_id"] for _, p in st.scroll(fields=["doc_id"])}

@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    "An index of the small folder, built by the command (copied by each test that damages it)."
    base = tmp_path_factory.mktemp("healthy")
    docs = docs_folder(base / "docs")
    r = run("index", docs, "--quiet", "--qdrant-path", base / "q", cwd=base)
    assert r.returncode == 0, r.stderr
    return base

def damaged_copy(healthy: Path, tmp_path: Path, rel: str, data: bytes) -> Path:
    "A copy of the healthy index with the file matching `rel` replaced by `data`."
    q = tmp_path / "q"; shutil.copytree(healthy / "q", q)
    next(q.glob(rel)).write_bytes(data)
    return q

# --- finding 6: a damaged or foreign index ------------------------------------------------------------------------

@pytest.mark.parametrize("rel,data", [
    ("cragrag/wal/open-1", b"\x07garbage" * 50),                                     # garbled write-ahead log
    ("cragrag/segments/*/vector_storage-dense/vectors/status.dat", b""),            # the engine panics on it
    ("cragrag/segments/*/payload_storage/page_0.dat", b""),                         # only shows when a point is read
    ("cragrag.record.json", b'{"schema": 1, "embed'),                               # the record cut short
], ids=["wal", "panic", "payload", "record"])
def test_damaged_index_is_one_line_for_every_command(healthy, tmp_path, rel, data):
    q = damaged_copy(healthy, tmp_path, rel, data)
    where = q / ("cragrag.record.json" if rel.endswith(".json") else "cragrag")
    for cmd in (["search", "보험사기 처벌"], ["ask", "보험사기죄의 처벌은?"], ["index", healthy / "docs", "--quiet"]):
        one_line(run(*cmd, "--qdrant-path", q, cwd=tmp_path), f"cragrag: the index at {where} {DAMAGED}")
    r = run("index", healthy / "docs", "--quiet", "--recreate", "--qdrant-path", q, cwd=tmp_path)   # the way out the message names
    assert r.returncode == 0 and "now holds 26 chunks" in r.stdout, r.stderr
    assert run("search", "보험사기 처벌", "--qdrant-path", q, cwd=tmp_path).returncode == 0

def test_serve_does_not_start_on_a_damaged_index(healthy, tmp_path):
    pytest.importorskip("uvicorn")
    q = damaged_copy(healthy, tmp_path, "cragrag/segments/*/vector_storage-dense/vectors/status.dat", b"")
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    r = run("serve", "--port", port, "--qdrant-path", q, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1].startswith(f"cragrag: the index at {q / 'cragrag'} {DAMAGED}"), r.stderr

def test_library_raises_store_corrupt(healthy, tmp_path):
    from cragrag.answering.pipeline import Pipeline
    q = damaged_copy(healthy, tmp_path, "cragrag/wal/open-1", b"\x07garbage" * 50)
    with pytest.raises(StoreCorrupt, match="rebuild it: cragrag index --recreate") as e:
        Pipeline(qdrant_path=q, trace_enabled=False).retrieve("보험사기 처벌")
    assert str(e.value).startswith(f"the index at {q / 'cragrag'} {DAMAGED}") and isinstance(e.value, RuntimeError)

def test_foreign_folders_are_one_line(tmp_path):
    foreign = tmp_path / "someones" / "cragrag"; foreign.mkdir(parents=True)      # a folder that only looks like a shard
    (foreign / "edge_config.json").write_text('{"theme": "dark"}'); (foreign / "notes.txt").write_text("mine")
    for cmd in (["search", "보험"], ["index", docs_folder(tmp_path / "docs", SMALL[:1]), "--quiet"]):
        one_line(run(*cmd, "--qdrant-path", tmp_path / "someones", cwd=tmp_path), f"cragrag: the index at {foreign} {DAMAGED}no write-ahead log")
    assert sorted(p.name for p in foreign.iterdir()) == ["edge_config.json", "notes.txt"]          # nothing written into it
    (tmp_path / "a-file").write_text("not a folder")
    one_line(run("search", "보험", "--qdrant-path", tmp_path / "a-file", cwd=tmp_path), "cragrag: qdrant_path")

def test_earlier_index_with_a_truncated_sqlite_is_one_line(tmp_path):
    from qdrant_client import QdrantClient, models
    old = tmp_path / "old"
    c = QdrantClient(path=str(old))
    c.create_collection("cragrag", vectors_config={"dense": models.VectorParams(size=4, distance=models.Distance.COSINE)})
    c.upsert("cragrag", points=[models.PointStruct(id=1, vector={"dense": [1.0, 0, 0, 0]})]); c.close()
    db = next(old.glob("collection/*/storage.sqlite")); db.write_bytes(db.read_bytes()[:100])
    one_line(run("search", "보험", "--qdrant-path", old, cwd=tmp_path), f"cragrag: {old} was built by an earlier cragrag")

# --- finding 7: an index run killed midway ------------------------------------------------------------------------

KILLER = """
import os, signal, sys
from cragrag.answering.pipeline import Pipeline
from cragrag.indexing.store import EdgeStore
upsert, calls = EdgeStore.upsert, [0]
def dying_upsert(self, points):
    calls[0] += 1
    if calls[0] == 2: os.kill(os.getpid(), signal.SIGKILL)          # kill -9 after the first batch is in
    return upsert(self, points)
EdgeStore.upsert = dying_upsert
Pipeline(qdrant_path=sys.argv[1], trace_enabled=False).index([sys.argv[2]], progress=False)
"""

def test_kill_9_mid_index_is_incomplete_warns_once_and_resumes(tmp_path):
    docs = docs_folder(tmp_path / "docs", SMALL + ["legalize-kr/보험업법_법률.md"])
    q = tmp_path / "q"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(cragrag.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", KILLER, str(q), str(docs)], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert p.returncode == -signal.SIGKILL, p.stderr
    with EdgeStore(q, "cragrag") as st:
        assert (index_status(st), st.count()) == ("incomplete", 64)                    # one batch of 64 made it
        assert st.record()["pending"] == sorted(f.stem for f in docs.iterdir())
    r = run("search", "보험사기 처벌", "--qdrant-path", q, cwd=tmp_path)                # served, with one warning line
    assert r.returncode == 0 and "보험사기" in r.stdout, r.stderr
    warned = [l for l in r.stderr.splitlines() if "incomplete" in l]
    assert warned == [l for l in r.stderr.splitlines() if l.startswith("cragrag:")] and len(warned) == 1, r.stderr
    assert warned[0].startswith("cragrag: collection 'cragrag' is incomplete: an index run did not finish (of 4 document(s)")

    from cragrag.answering.pipeline import Pipeline                                              # a library user: warned once, not failed
    with Pipeline(qdrant_path=q, trace_enabled=False) as pl, warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert pl.retrieve("보험사기 처벌").sources and pl.retrieve("보험금 청구").sources
    assert len([x for x in w if "is incomplete" in str(x.message)]) == 1

    r = run("index", docs, "--quiet", "--qdrant-path", q, cwd=tmp_path)               # resume: only the rest is written
    assert r.returncode == 0 and ", 64 unchanged," in r.stdout, r.stdout + r.stderr
    with EdgeStore(q, "cragrag") as st: assert (index_status(st), st.record()["pending"]) == ("complete", [])
    r = run("search", "보험사기 처벌", "--qdrant-path", q, cwd=tmp_path)
    assert r.returncode == 0 and "incomplete" not in r.stderr, r.stderr

# --- finding 8: symlinks out of the folder ------------------------------------------------------------------------

def test_symlink_out_of_the_folder_is_skipped_with_a_warning(tmp_path):
    docs = docs_folder(tmp_path / "docs", SMALL[:1])
    outside = tmp_path / "private"; outside.mkdir()
    (outside / "인사규정.md").write_text("제1조(목적) 이 규정은 임직원의 급여를 정한다.\n제2조(급여) 급여는 매월 25일에 지급한다.", encoding="utf-8")
    (docs / "s").mkdir(); (docs / "s" / "인사규정.md").symlink_to(outside / "인사규정.md")
    (docs / "s" / "passwd.txt").symlink_to("/etc/passwd")
    q = tmp_path / "q"
    r = run("index", docs, "--quiet", "--qdrant-path", q, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("1 documents"), r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("cragrag: skipped 2 file(s) reached through a symlink that leads out of the folder")
    assert f"{docs / 's' / '인사규정.md'} -> {outside / '인사규정.md'}" in r.stderr and "/etc/passwd" in r.stderr
    assert doc_ids(q) == {"보험사기방지특별법_법률"}
    (docs / "s" / "passwd.txt").unlink()
    r = run("index", docs, "--quiet", "--qdrant-path", q, cwd=tmp_path, env={"CRAGRAG_FOLLOW_SYMLINKS": "true"})   # the setting lets it in
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert doc_ids(q) == {"보험사기방지특별법_법률", "인사규정"}

# --- finding 10: one bad file, and a second index on a held folder -------------------------------------------------

def test_bad_files_are_skipped_and_strict_stops(tmp_path):
    docs = docs_folder(tmp_path / "docs", SMALL[:2])
    (docs / "빈파일.md").write_bytes(b""); (docs / "scan.pdf").write_bytes(b"%PDF-1.4 garbage")
    q = tmp_path / "q"
    r = run("index", docs, "--quiet", "--strict", "--qdrant-path", q, cwd=tmp_path)
    one_line(r, f"cragrag: {docs / 'scan.pdf'}: not a readable PDF")
    assert not (q / "cragrag").exists()                                               # all or nothing: nothing written
    r = run("index", docs, "--quiet", "--qdrant-path", q, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("2 documents"), r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"cragrag: skipped {docs / 'scan.pdf'}: " + r.stderr.splitlines()[0].split(": ", 2)[2],
                                     f"cragrag: skipped {docs / '빈파일.md'}: empty file (0 bytes)"], r.stderr
    assert "not a readable PDF" in r.stderr
    assert doc_ids(q) == {"보험사기방지특별법_법률", "보험업감독규정_별표14"}

def test_second_index_on_a_held_folder_fails_before_parsing(healthy, tmp_path):
    q = tmp_path / "q"; shutil.copytree(healthy / "q", q)
    docs = docs_folder(tmp_path / "docs"); (docs / "빈파일.md").write_bytes(b"")       # parsing it would print a warning
    with EdgeStore(q, "cragrag"):                                                      # the first indexer, still running
        for extra in ([], ["--recreate"]):
            r = run("index", docs, "--qdrant-path", q, *extra, cwd=tmp_path)
            one_line(r, f"cragrag: another cragrag process (pid {os.getpid()}) has {q / 'cragrag'} open")
            assert "skipped" not in r.stderr and "indexing" not in r.stderr                 # refused before any file was read
    with EdgeStore(q, "cragrag") as st: assert st.count() == 26                         # the held index was not touched

# --- a large file: loading and chunking do linear work ---------------------------------------------------------------

from cragrag.indexing import documents
from cragrag.indexing.documents import Line, chunk_document, load_document

SENTENCES = ["보험회사는 보험계약자의 이익을 보호하기 위하여 필요한 조치를 하여야 한다. <개정 2014. 3. 11., 2020. 12. 8.>",
             "② 삭제 <2017. 4. 18.>", "1. 보험금을 지급하는 경우; 2. 보험료를 환급하는 경우 <신설 2021. 6. 8.>",
             "가. 제18조에 따른 자본금을 납입한 경우 [전문개정 2010. 7. 23.]"]

def fill(nbytes: int, sep: str, make) -> str:
    out, n, i = [], 0, 0
    while n < nbytes: out.append(make(i)); n += len(out[-1].encode()) + len(sep.encode()); i += 1
    return sep.join(out)

def big_line(nbytes: int) -> str:
    "A single line of statute-like text with no newline: one article."
    return "제1조(목적) " + fill(nbytes, " ", lambda i: SENTENCES[i % len(SENTENCES)])

def big_article(nbytes: int) -> str:
    "A legalize-kr file of one article with many 항."
    return "# 시험법\n\n##### 제1조 (목적)\n\n" + fill(nbytes, "\n\n", lambda i: f"**{chr(0x2460 + i % 20)}** {SENTENCES[i % 4]}")

def scanned(monkeypatch, path: Path, max_chars: int = 400):
    "(characters of the file, characters `amendment_notes` read while loading and chunking it, the document, its chunks)."
    seen, real = [], documents.amendment_notes
    monkeypatch.setattr(documents, "amendment_notes", lambda text: seen.append(len(text)) or real(text))
    doc = load_document(path)
    chunks = chunk_document(doc, max_chars)
    monkeypatch.setattr(documents, "amendment_notes", real)
    return len(path.read_text(encoding="utf-8")), sum(seen), doc, chunks

@pytest.mark.parametrize("make,suffix", [(big_line, ".txt"), (big_article, ".md")], ids=["one-line", "one-article"])
def test_chunking_a_large_file_reads_each_article_once(monkeypatch, tmp_path, make, suffix):
    sizes = {}
    for mb in (0.25, 1):
        p = tmp_path / f"big_{mb}{suffix}"; p.write_text(make(int(mb * 1_000_000)), encoding="utf-8")
        chars, read, doc, chunks = scanned(monkeypatch, p)
        assert len(doc.articles) == 1 and len(chunks) > 250 * mb, (len(doc.articles), len(chunks))
        assert read <= 2 * chars, f"{mb} MB: amendment notes scanned {read:,} characters for {chars:,} ({len(chunks)} chunks)"
        assert {c.amended_last for c in chunks} == {doc.articles[0].amendments.last} == {"2021-06-08"}
        assert "".join(c.text for c in chunks).replace(" ", "").replace("\n", "") == doc.articles[0].text.replace(" ", "").replace("\n", "")
        sizes[mb] = read
    assert sizes[1] <= 4 * 1.1 * sizes[0.25]      # four times the input, about four times the reading (not sixteen)

def test_chunking_many_tiny_lines_reads_each_block_once(monkeypatch, tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(fill(1_000_000, "\n", lambda i: "" if i % 10 == 9 else f"짧은 줄 {i} <개정 2020. 1. 2.>"), encoding="utf-8")
    chars, read, doc, chunks = scanned(monkeypatch, p)
    assert len(doc.articles) > 1000 and read <= chars
    assert {c.amended_last for c in chunks} == {"2020-01-02"}

def test_hard_cut_of_a_line_with_no_sentence_end():
    text = "가" * 1_000_003
    lines = documents._split_line(Line(text, 3), 400)
    assert [len(l.text) for l in lines] == [400] * 2500 + [3] and "".join(l.text for l in lines) == text
    assert {l.page for l in lines} == {3}

def test_patterns_that_re_read_a_line_are_gone(tmp_path):
    "Inputs that made a regex re-read a long run (seconds to hours) load and chunk in one pass, to the same result."
    spaces = " " * 200_000
    assert documents.DELETED_PART.match(spaces + "x") is None and documents.DELETED_PART.match("② 삭제" + spaces + "x") is None
    assert documents.DELETED_PART.match("② 삭제" + spaces + "<2015.7.31>" + spaces)
    assert documents.amendment_notes("< " + "2014.3.1 가나다 " * 20_000 + "<개정 2020.1.1>").amended == ["2020-01-01"]
    md = ("# 시험법\n\n## 제1장" + spaces + "총칙 <개정 2010.7.23>  \n## 제2장 " + "<" * 100_000 + "\n##### 제1조 (목적)\n\n**①** 본문\n\n"
          "##### 제2조\n\n삭제" + spaces + "<2011. 1. 24>\n")
    (tmp_path / "시험법.md").write_text(md, encoding="utf-8")
    d = load_document(tmp_path / "시험법.md")
    assert [a.chapter for a in d.articles] == ["제2장 " + "<" * 100_000]   # 제2장 closed 제1장; an unclosed < is no note
    assert d.deleted == ["제2조"] and d.deleted_on == {"제2조": "2011-01-24"}
    assert [c.text for c in chunk_document(d)] == ["① 본문"]
    assert documents.parse_legalize("## 제1장" + spaces + "총칙 <개정 2010.7.23>  \n##### 제1조 (목적)\n본문", "시험법")[0][0].chapter == "제1장" + spaces + "총칙"

