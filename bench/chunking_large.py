"""Loading + chunking time of large generated files, per MB, at 1, 2, 4 and 8 MB: the time per MB should stay flat
(linear work) and time(8 MB) / time(1 MB) should be about 8, not about 64 (quadratic work). Three shapes, each a
worst case an operator has met or may meet:
  one-line   a single line of Korean statute-like text, no newlines (one article, thousands of chunks)
  one-article a legalize-kr file with one article of many 항 (one line each)
  tiny-lines  a plain text file of many short lines (many blocks)
Measured in the same run against itself (the sizes are the only baseline). Prints figures; asserts nothing.
    python bench/chunking_large.py [SHAPE ...] [--sizes 1,2,4,8] [--max-chars 400] [--repeat 3]"""
import argparse, sys, tempfile, time
from pathlib import Path
from cragrag.indexing.documents import chunk_document, load_document

SENTENCES = ["보험회사는 보험계약자의 이익을 보호하기 위하여 대통령령으로 정하는 바에 따라 필요한 조치를 하여야 한다.",
             "금융위원회는 제1항에 따른 조치의 세부 기준을 정하여 고시할 수 있다. <개정 2014. 3. 11., 2020. 12. 8.>",
             "다만, 다음 각 호의 어느 하나에 해당하는 경우에는 그러하지 아니하다.",
             "1. 보험금을 지급하는 경우; 2. 보험료를 환급하는 경우 <신설 2021. 6. 8.>",
             "가. 제18조에 따른 자본금 또는 기금을 납입한 경우 [전문개정 2010. 7. 23.]",
             "② 삭제 <2017. 4. 18.>"]

def _fill(target: int, sep: str, make) -> str:
    "Pieces `make(i)` joined by `sep` until the text holds `target` UTF-8 bytes."
    out, n, i = [], 0, 0
    while n < target:
        s = make(i); out.append(s); n += len(s.encode()) + len(sep.encode()); i += 1
    return sep.join(out)

def one_line(nbytes: int) -> str:
    "A single line of statute-like text: one article, then sentences with amendment notes and no newline at all."
    return "제1조(목적) " + _fill(nbytes, " ", lambda i: SENTENCES[i % len(SENTENCES)])

def one_article(nbytes: int) -> str:
    "A legalize-kr file with a single article of many 항 (①..⑳ cycling), each one line with a note."
    body = _fill(nbytes, "\n\n", lambda i: f"**{chr(0x2460 + i % 20)}** {SENTENCES[i % 2]} {SENTENCES[3]}")
    return "---\n제목: 시험법\n---\n# 시험법\n\n##### 제1조 (목적)\n\n" + body + "\n"

def tiny_lines(nbytes: int) -> str:
    "Many short lines, a blank line every tenth (text blocks, no article structure)."
    return _fill(nbytes, "\n", lambda i: "" if i % 10 == 9 else f"짧은 줄 {i} 입니다.")

SHAPES = {"one-line": (one_line, ".txt"), "one-article": (one_article, ".md"), "tiny-lines": (tiny_lines, ".txt")}

def measure(shape: str, mb: int, max_chars: int, folder: Path, repeat: int) -> tuple[float, int]:
    "Seconds to load and chunk a `mb` MB file of `shape` (the best of `repeat` runs), and how many chunks it gave."
    make, suffix = SHAPES[shape]
    p = folder / f"{shape}_{mb}mb{suffix}"
    p.write_text(make(mb * 1_000_000), encoding="utf-8")
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        chunks = chunk_document(load_document(p), max_chars)
        best = min(best, time.perf_counter() - t)
    return best, len(chunks)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shapes", nargs="*", choices=[[], *SHAPES], help="default: all")
    ap.add_argument("--sizes", default="1,2,4,8", help="sizes in MB, comma separated (the first is the ratio's base)")
    ap.add_argument("--max-chars", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3, help="runs per size; the best is reported")
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes or list(SHAPES):
            secs = {}
            for mb in sizes:
                secs[mb], n = measure(shape, mb, a.max_chars, Path(tmp), a.repeat)
                print(f"{shape:12} {mb:3d} MB: {secs[mb]:7.2f} s, {secs[mb] / mb:6.3f} s/MB, {n} chunks", flush=True)
            lo, hi = sizes[0], sizes[-1]
            print(f"{shape:12} time({hi} MB) / time({lo} MB) = {secs[hi] / secs[lo]:.1f} (linear: {hi / lo:.0f}, quadratic: {(hi / lo) ** 2:.0f})", flush=True)

if __name__ == "__main__": sys.exit(main())
