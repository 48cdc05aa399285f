"Build the offline docs site and open it: every notebook has a page, links resolve, API docs are present."
import os, re, shutil, pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_BUILT: dict = {}

def built_site(tmp_path_factory) -> Path:
    "The site, built once per test session and shared with test_site_browser.py (CRAGRAG_SITE=<folder>: a site built before)."
    if "site" not in _BUILT:
        if os.environ.get("CRAGRAG_SITE"): _BUILT["site"] = Path(os.environ["CRAGRAG_SITE"])
        else:
            from cragrag.tools.docsite import build_site
            old = Path.cwd(); os.chdir(ROOT)
            try: _BUILT["site"] = build_site(dest=tmp_path_factory.mktemp("docs") / "site")
            finally: os.chdir(old)
    return _BUILT["site"]

@pytest.mark.skipif(not shutil.which("pandoc"), reason="pandoc not installed (apt-get install pandoc)")
def test_site(tmp_path_factory):
    site = built_site(tmp_path_factory)
    html_pages = [p for p in site.rglob("*.html") if "pagefind" not in p.relative_to(site).parts]
    pages = {p.relative_to(site).as_posix() for p in html_pages}
    for nb in (ROOT / "nbs").rglob("*.ipynb"):
        rel = nb.relative_to(ROOT / "nbs")
        if any(x.startswith((".", "_")) for x in rel.parts): continue
        name = "index.html" if nb.stem == "index" else re.sub(r"^\d+_", "", nb.stem) + ".html"
        assert (rel.parent / name).as_posix() in pages, rel
    for page in html_pages:
        html = page.read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', html):
            assert (page.parent / href).exists(), f"{page.name} links to missing {href}"
        assert 'href="https://cragrag.github.io' not in html, page.name      # cross-references are relative
        assert not re.search(r'href="https?://(?:github\.com/cragrag|[\w.]*example\.org)', html), page.name   # no placeholder host: the source ships with the site
        if page.relative_to(site).parts[0] == "tutorials": assert re.search(r'class="[^"]*\boutput\b', html), f"{page.name}: not executed"
        if page.name != "docsite.html":             # (that page's own tests quote directives and nbdev's misread entries)
            assert "#| export" not in html and "#| default_exp" not in html and "#| hide" not in html, page.name
            assert "Create a new string object" not in html and "interactive(children=" not in html, page.name   # no str docstring on an Enum
        assert 'rel="next"' in html or 'rel="prev"' in html, page.name
    module_pages = [p for p in html_pages if p.relative_to(site).parts[0] not in ("tutorials", "course", "src")]   # the library's pages
    with_outputs = [p for p in module_pages if re.search(r'class="[^"]*\boutput\b', p.read_text(encoding="utf-8"))]
    assert len(module_pages) >= 60 and len(with_outputs) >= 60, f"{len(with_outputs)} of {len(module_pages)} module pages show outputs"
    src_links = {h for p in html_pages for h in re.findall(r'href="(?:\.\./)*(src/cragrag/[\w/]+\.py\.html)', p.read_text(encoding="utf-8"))}
    assert src_links and all((site / h).is_file() for h in src_links)        # [source] goes to the site's own copy
    docs = (site / "indexing" / "documents.html").read_text(encoding="utf-8")
    for sym in ["load_document", "chunk_document", "load_documents", "split_article"]:
        assert re.search(rf"<h[2-4][^>]*>{sym}</h[2-4]>", docs), sym   # show_doc API entry
    assert "article-aware" in docs                    # the prose is there
    assert '<span class="kw">def</span>' in docs      # highlighted code
    cfg = (site / "core" / "config.html").read_text(encoding="utf-8")
    assert "crag_score_threshold" in cfg and "Settings" in cfg
    crag = (site / "decide" / "crag.html").read_text(encoding="utf-8")
    flat = re.sub(r"\s+", "", crag)
    assert '<spanclass="kw">class</span>GateDecision(' in flat and "<td><code>REFUSE</code></td><td><code>'refuse'</code></td>" in flat   # an Enum's members
    assert "<td><code>top_score</code></td>" in flat  # a dataclass's fields
    import html as h
    home_html = (site / "index.html").read_text(encoding="utf-8")
    home = h.unescape(re.sub(r"<[^>]+>", "", home_html))
    assert "pip install -c constraints.txt -e . && cragrag demo" in home and "&& pytest" in home
    assert all(f"<h2>{g}</h2>" in home_html for g in ("Course", "core", "text", "decide", "answering", "serve", "Reference"))   # the sidebar follows the layers
    llms = (site / "llms.txt").read_text(encoding="utf-8")
    assert llms.startswith("# cragrag\n\n> ") and "- [The CRAG gate](decide/crag.html): " in llms
    css = (site / "assets" / "site.css").read_text(encoding="utf-8")
    assert "prefers-color-scheme:dark" in css and "code span.kw" in css
    from cragrag.tools.docsite import _find_font, _pagefind
    if _find_font(): assert css.startswith("@font-face") and (site / "assets" / "fonts" / "OFL.txt").is_file()
    if _pagefind(): assert (site / "pagefind" / "pagefind-ui.js").is_file() and '<div id="search">' in home_html

def test_readme_is_generated_from_index(tmp_path, monkeypatch):
    from cragrag.tools.docsite import build_readme
    monkeypatch.chdir(ROOT)
    out = build_readme(dest=tmp_path / "README.md")
    assert out.read_text(encoding="utf-8") == (ROOT / "README.md").read_text(encoding="utf-8"), \
        "README.md is stale: run python -c 'from cragrag.tools.docsite import build_readme; build_readme()'"

EXTRA_OF = {"matplotlib": "dev", "ipywidgets": "dev", "cragrag.course.widgets": "dev", "langgraph": "langgraph",
            "FlagEmbedding": "bge", "transformers": "bge", "torch": "bge", "fastapi": "server", "uvicorn": "server", "cragrag.serve": "server"}

def needed_extras(code: str) -> set[str]:
    "The extras a notebook's code needs: what it imports (or looks up with `find_spec`) that an extra provides."
    mods = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", code, re.M) + re.findall(r"find_spec\(\s*[\"']([\w.]+)", code)
    return {x for m in mods for name, x in EXTRA_OF.items() if m == name or m.startswith(name + ".")}

def test_needed_extras():
    test = "import os\nfrom matplotlib.figure import Figure\nfrom cragrag.course.widgets import png\nHAVE = find_spec('langgraph')\n# import torch"
    assert needed_extras(test) == {"dev", "langgraph"}              # (a comment names nothing)
    assert needed_extras("from cragrag.core.config import Settings") == set()

def test_executed_pages_state_their_extras():
    "Every notebook the docs build runs says near its top what it needs installed, names every extra its code uses, and only real ones."
    import json
    from cragrag.tools.docsite import EXECUTE
    real = set(re.findall(r"'(\w+)': \w+_requirements", (ROOT / "setup.py").read_text(encoding="utf-8")))
    assert {"dev", "bge", "server", "langgraph"} <= real
    for path in sorted({p for g in EXECUTE for p in (ROOT / "nbs").glob(g)}):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        top = [s for c in cells[:3] if c["cell_type"] == "markdown" and re.match(r"\*\*(필요한 설치|Needs):\*\*", s := "".join(c["source"]))]
        assert top, f"{path.name}: no '**필요한 설치:**' / '**Needs:**' line among its first cells"
        named = {x.strip() for group in re.findall(r"\[(\w+(?:,\s*\w+)*)\]", top[0]) for x in group.split(",")}
        assert named <= real, f"{path.name} names extras that do not exist: {named - real}"
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert needed_extras(code) <= named, f"{path.name} uses {needed_extras(code) - named} without saying so"
