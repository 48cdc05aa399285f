"""The prose of every lesson, course page and the README states no number that its cells do not print or check
(`cragrag.tools.docsite.unbacked_numbers`): the lessons are run as the docs build runs them (its cache shared)."""
import json, pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"

@pytest.fixture(scope="module")
def executed():
    "The lessons and course pages, executed (the docs build's cache: run once for the whole test session)."
    from cragrag.tools.docsite import EXECUTE, execute_notebooks
    return execute_notebooks(NBS, EXECUTE)

def test_lessons_and_course_pages(executed):
    from cragrag.tools.docsite import unbacked_numbers
    found = {rel: unbacked_numbers(json.loads((NBS / rel).read_text(encoding="utf-8")), ran) for rel, ran in executed.items()}
    assert len(found) >= 14 and any(r.startswith("tutorials/") for r in found)
    bad = [f"{rel} cell {i}: {n} in …{ctx}…" for rel, u in found.items() for i, n, ctx in u]
    assert not bad, "numbers the prose states that no output or code backs:\n" + "\n".join(bad)

def test_readme():
    "The README is index.ipynb's prose: its numbers are backed by that notebook's code (its checks) and outputs."
    from cragrag.tools.docsite import unbacked_numbers
    bad = unbacked_numbers(json.loads((NBS / "index.ipynb").read_text(encoding="utf-8")))
    assert not bad, "numbers the README states that index.ipynb does not back:\n" + "\n".join(f"cell {i}: {n} in …{c}…" for i, n, c in bad)
