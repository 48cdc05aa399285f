"Run every notebook's inline tests (what `nbdev_test` does), one pytest test per notebook: the library notebooks in `nbs/` and its layer folders, and the Korean course track in `nbs/tutorials/`."
import pytest
from pathlib import Path

NBS = Path(__file__).resolve().parent.parent / "nbs"
NOTEBOOKS = sorted(p for p in NBS.rglob("*.ipynb") if not any(part.startswith(("_", ".")) for part in p.relative_to(NBS).parts))

@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.relative_to(NBS).with_suffix("").as_posix() for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch):
    from nbdev.test import test_nb
    from nbdev.config import get_config
    monkeypatch.chdir(nb.parent)              # a notebook runs from its own folder, as in Jupyter and `nbdev_test`
    flags = get_config().tst_flags.split("|") if get_config().get("tst_flags") else []
    ok, _ = test_nb(nb, skip_flags=flags, showerr=True)
    assert ok, f"{nb.relative_to(NBS)} failed (see the traceback above)"

def test_tutorials_collected():
    "The course track is part of the suite (a moved folder would silently drop it)."
    names = {p.relative_to(NBS).as_posix() for p in NOTEBOOKS}
    assert "tutorials/00_start_here.ipynb" in names and sum(n.startswith("tutorials/") for n in names) >= 8
