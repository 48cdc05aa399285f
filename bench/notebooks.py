"""Wall time of every notebook run top to bottom in a fresh kernel, the way a reader (or CI) runs it:
`jupyter nbconvert --to notebook --execute --output <tmp>`, one notebook at a time, offline. Prints per notebook
the seconds it took and whether it passed, then checks that `git status --porcelain` is the same before and after
(a notebook must write nothing into the repository). The budget is 120 s per notebook on the 2-core reference
machine; a notebook over it is flagged SLOW (it still passes).

    python bench/notebooks.py                       # nbs/**/*.ipynb, the course track last
    python bench/notebooks.py 21 22 80_pipeline     # a subset: names or prefixes of notebook stems
    python bench/notebooks.py --tutorials-only      # only nbs/tutorials/
    python bench/notebooks.py --exclude 39 --json /tmp/times.json
    flags: --timeout (per notebook, default 600 s) --budget (default 120 s) --no-tutorials --keep DIR

Nothing is asserted; the exit status is 1 when a notebook failed or the working tree changed."""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"

def notebooks(include_tutorials: bool = True, tutorials_only: bool = False) -> list[Path]:
    "Library notebooks (nbs/ and its layer folders, not `_`-prefixed) then the course track (nbs/tutorials/*.ipynb)."
    lib = sorted(p for p in NBS.rglob("*.ipynb") if p.parent.name != "tutorials" and not any(x.startswith(("_", ".")) for x in p.relative_to(NBS).parts))
    tut = sorted(p for p in (NBS / "tutorials").glob("*.ipynb") if not p.name.startswith(("_", ".")))
    if tutorials_only: return tut
    return lib + (tut if include_tutorials else [])

def select(nbs: list[Path], names: list[str], exclude: list[str]) -> list[Path]:
    "Keep notebooks whose stem equals or starts with one of `names` (all when empty), minus `exclude`."
    match = lambda p, ks: any(p.stem == k or p.stem.startswith(k) or p.name == k for k in ks)
    out = [p for p in nbs if not names or match(p, names)]
    return [p for p in out if not match(p, exclude)]

def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout

def run_one(nb: Path, out_dir: Path, timeout: int) -> tuple[bool, float, str]:
    "Execute `nb` in a fresh kernel (cwd = its folder, as Jupyter does); the executed copy goes to `out_dir`."
    out = out_dir / (nb.parent.name + "__" + nb.name)
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", str(out),
           f"--ExecutePreprocessor.timeout={timeout}", str(nb)]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=nb.parent, capture_output=True, text=True, timeout=timeout + 60)
        ok, err = r.returncode == 0, r.stderr
    except subprocess.TimeoutExpired as e:
        ok, err = False, f"timed out after {timeout + 60} s"
    dt = time.perf_counter() - t0
    tail = "" if ok else "\n".join(l for l in err.strip().splitlines()[-6:])
    return ok, dt, tail

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="notebook stems or prefixes (e.g. 21 80_pipeline); all when omitted")
    ap.add_argument("--exclude", nargs="*", default=[], help="stems or prefixes to skip")
    ap.add_argument("--timeout", type=int, default=600, help="per-notebook cell timeout, seconds")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds a notebook may take before it is flagged SLOW")
    ap.add_argument("--no-tutorials", action="store_true", help="skip nbs/tutorials/")
    ap.add_argument("--tutorials-only", action="store_true", help="only nbs/tutorials/")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--keep", help="keep the executed copies in this folder (default: a temporary folder)")
    a = ap.parse_args(argv)
    nbs = select(notebooks(not a.no_tutorials, a.tutorials_only), a.names, a.exclude)
    if not nbs: print("no notebook matches", a.names); return 1
    before = git_status()
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="cragrag-nbs-") as tmp:
        out_dir = Path(a.keep) if a.keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        print(f"{len(nbs)} notebooks, fresh kernel each, timeout {a.timeout} s, budget {a.budget:.0f} s", flush=True)
        for nb in nbs:
            ok, dt, tail = run_one(nb, out_dir, a.timeout)
            failed += not ok
            flag = "ok  " if ok else "FAIL"
            slow = "  SLOW" if dt > a.budget else ""
            print(f"{flag} {dt:7.1f} s  {nb.relative_to(NBS)}{slow}", flush=True)
            if tail: print("      " + tail.replace("\n", "\n      "), flush=True)
            rows.append(dict(notebook=str(nb.relative_to(ROOT)), passed=ok, seconds=round(dt, 1)))
    after = git_status()
    clean = before == after
    total = sum(r["seconds"] for r in rows)
    n_slow = sum(r["seconds"] > a.budget for r in rows)
    print(f"\n{len(rows) - failed}/{len(rows)} passed, {n_slow} over {a.budget:.0f} s, total {total:.0f} s")
    if clean: print("git status unchanged: nothing written into the repository")
    else:
        b, c = set(before.splitlines()), set(after.splitlines())
        print("git status CHANGED:"); [print("  +", l) for l in sorted(c - b)]; [print("  -", l) for l in sorted(b - c)]
    if a.json: Path(a.json).write_text(json.dumps(dict(results=rows, git_clean=clean), indent=1))
    return 0 if (failed == 0 and clean) else 1

if __name__ == "__main__": sys.exit(main())
