"Build the offline docs site and open it: every notebook has a page, links resolve, API docs are present."
import re, shutil, pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.skipif(not shutil.which("pandoc"), reason="pandoc not installed (apt-get install pandoc)")
def test_site(tmp_path, monkeypatch):
    from cragrag.docsite import build_site
    monkeypatch.chdir(ROOT)
    site = build_site(dest=tmp_path / "site")
    pages = {p.name for p in site.glob("*.html")}
    for nb in (ROOT / "nbs").glob("*.ipynb"):
        name = "index.html" if nb.stem == "index" else re.sub(r"^\d+_", "", nb.stem) + ".html"
        assert name in pages, name
    for page in site.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', html):
            assert (site / href).exists(), f"{page.name} links to missing {href}"
        if page.name != "docsite.html":             # (that page's own tests quote directives)
            assert "#| export" not in html and "#| default_exp" not in html and "#| hide" not in html, page.name
    docs = (site / "documents.html").read_text(encoding="utf-8")
    for sym in ["load_document", "chunk_document", "load_documents", "split_article"]:
        assert re.search(rf"<h[2-4][^>]*>{sym}</h[2-4]>", docs), sym   # show_doc API entry
    assert "article-aware" in docs                    # the prose is there
    cfg = (site / "config.html").read_text(encoding="utf-8")
    assert "crag_score_threshold" in cfg and "Settings" in cfg
    import html as h
    home = h.unescape(re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8")))
    assert "pip install -e . && cragrag demo" in home and "&& pytest" in home

def test_readme_is_generated_from_index(tmp_path, monkeypatch):
    from cragrag.docsite import build_readme
    monkeypatch.chdir(ROOT)
    out = build_readme(dest=tmp_path / "README.md")
    assert out.read_text(encoding="utf-8") == (ROOT / "README.md").read_text(encoding="utf-8"), \
        "README.md is stale: run python -c 'from cragrag.docsite import build_readme; build_readme()'"
