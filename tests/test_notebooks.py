"""Run every notebook's inline tests (what `nbdev_test` does), one pytest test per notebook: the library notebooks in `nbs/` and its layer folders, and the Korean course track in `nbs/tutorials/`.

A notebook the docs build has already run to its end over this very code (its executed copy is in the build's cache under
a key of the notebook's text, the package's files and the versions that change results: `cached_execution`) is not run
a second time: the suite and the docs build share one run of each notebook."""
import pytest
from pathlib import Path
from conftest import stop_leftovers

NBS = Path(__file__).resolve().parent.parent / "nbs"
NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb") if not any(part.startswith(("_", ".")) for part in p.relative_to(NBS).parts))

_FINGERPRINT: list[str] = []

def already_ran(nb: Path) -> bool:
    "Whether the docs build's cache holds an executed copy of `nb` for its current key (it passed over this code)."
    from cragrag.tools.docsite import cached_execution, code_fingerprint
    if not _FINGERPRINT: _FINGERPRINT.append(code_fingerprint())
    return cached_execution(nb, fingerprint=_FINGERPRINT[0]) is not None

@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.relative_to(NBS).with_suffix("").as_posix() for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch):
    from nbdev.test import test_nb
    from nbdev.config import get_config
    if already_ran(nb): return
    monkeypatch.chdir(nb.parent)              # a notebook runs from its own folder, as in Jupyter and `nbdev_test`
    flags = get_config().tst_flags.split("|") if get_config().get("tst_flags") else []
    try: ok, _ = test_nb(nb, skip_flags=flags, showerr=True)
    finally: left = stop_leftovers()
    assert ok, f"{nb.relative_to(NBS)} failed (see the traceback above)"
    assert not left, f"{nb.relative_to(NBS)} left running: {left} (stop it in the notebook: stop_servers(), close(), join())"

def test_tutorials_collected():
    "The course track is part of the suite (a moved folder would silently drop it)."
    names = {p.relative_to(NBS).as_posix() for p in NOTEBOOKS}
    assert "tutorials/00_start_here.ipynb" in names and sum(n.startswith("tutorials/") for n in names) >= 8

def test_leftovers_are_stopped(tmp_path):
    "A notebook that starts a server and fails before stopping it: the server is stopped for it, and said."
    import json, socket, time, httpx
    from nbdev.test import test_nb
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    src = ("import threading, time, httpx\nfrom cragrag.answering.pipeline import Pipeline\nfrom cragrag.serve.server import serve\n"
           f"threading.Thread(target=serve, args=('127.0.0.1', {port}, Pipeline(qdrant_path=':memory:', trace_enabled=False)), kwargs=dict(warm=False), daemon=True).start()\n"
           f"end = time.time() + 60\nwhile True:\n    try: httpx.get('http://127.0.0.1:{port}/health', timeout=2); break\n"
           "    except httpx.TransportError: assert time.time() < end; time.sleep(0.2)\n1 / 0")
    meta = json.loads((NBS / "tutorials" / "00_start_here.ipynb").read_text(encoding="utf-8"))["metadata"]
    cell = {"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None, "source": src}
    (nb := tmp_path / "serves.ipynb").write_text(json.dumps({"cells": [cell], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}))
    ok, _ = test_nb(nb, showerr=False)
    assert not ok
    assert stop_leftovers() == ["1 server(s)"]
    with pytest.raises(httpx.TransportError): httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    assert stop_leftovers() == []
