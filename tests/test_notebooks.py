"Run every notebook's inline tests (what `nbdev_test` does), one pytest test per notebook."
import pytest
from pathlib import Path

NBS = Path(__file__).resolve().parent.parent / "nbs"
NOTEBOOKS = sorted(p for p in NBS.glob("*.ipynb") if not p.name.startswith(("_", ".")))

@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(nb, monkeypatch):
    from nbdev.test import test_nb
    from nbdev.config import get_config
    monkeypatch.chdir(NBS)
    flags = get_config().tst_flags.split("|") if get_config().get("tst_flags") else []
    ok, _ = test_nb(nb, skip_flags=flags, showerr=True)
    assert ok, f"{nb.name} failed (see the traceback above)"
