"""Headless Chromium opens every page of the built docs site, as a reader's browser would.

It fails on a broken link or anchor, an image that does not load, a console error, Korean text drawn as boxes, any character
of a page's text that neither the site's font nor DejaVu has (emoji, ㊿: a box on the reader's screen), a link to a placeholder
host, a page of an executed notebook (lessons and course modules alike) with code but no outputs or with a widget shown
without its static table, or a plot of an executed notebook missing from its page. Chromium runs with a font configuration
that holds no Korean font (only DejaVu), so the Hangul on the pages can only be drawn by the font the site brings. The
site is served over HTTP on 127.0.0.1, and also opened once from `file://`, the way a reader opens a local copy. DevTools
protocol commands go over `--remote-debugging-pipe`: no websocket library. Set CRAGRAG_SITE_SHOTS=<folder> to keep
screenshots: the home page, an API page and lesson 5 at its plot (light and dark, 1280 px), and lesson 5 at 390 px."""
import fcntl, functools, http.server, json, os, queue, re, shutil, subprocess, threading, time, pytest
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from test_docs import ROOT, built_site

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
pytestmark = [pytest.mark.skipif(not CHROMIUM, reason="chromium not installed (apt-get install chromium)"),
              pytest.mark.skipif(not shutil.which("pandoc"), reason="pandoc not installed (apt-get install pandoc)")]

class Chromium:
    "Headless Chromium driven through the DevTools protocol on fds 3 (commands in) and 4 (replies and events out)."
    def __init__(self, profile: Path, env: dict):
        cmd_r, self._w = os.pipe(); self._r, out_w = os.pipe()
        def fds():                                      # (copies above 9 first: a pipe end may itself be fd 3 or 4)
            a, b = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3); os.dup2(b, 4)
        self.proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                                      "--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}",
                                      "--remote-debugging-pipe", "about:blank"], preexec_fn=fds, close_fds=False, env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=None if os.environ.get("CRAGRAG_CHROMIUM_LOG") else subprocess.DEVNULL)
        os.close(cmd_r); os.close(out_w)
        self._id, self.replies, self.events = 0, {}, queue.Queue()
        self._cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf = b""
        while chunk := os.read(self._r, 1 << 16):
            buf += chunk
            *msgs, buf = buf.split(b"\0")
            for m in map(json.loads, msgs):
                if "id" in m:
                    with self._cv: self.replies[m["id"]] = m; self._cv.notify_all()
                else: self.events.put(m)

    def send(self, method: str, session: str | None = None, timeout: float = 30, **params) -> dict:
        self._id += 1; i = self._id
        os.write(self._w, json.dumps({"id": i, "method": method, "params": params, **({"sessionId": session} if session else {})}).encode() + b"\0")
        with self._cv:
            if not self._cv.wait_for(lambda: i in self.replies, timeout): raise TimeoutError(method)
            r = self.replies.pop(i)
        if "error" in r: raise RuntimeError(f"{method}: {r['error']}")
        return r.get("result", {})

    def tab(self) -> str:
        "A new tab, attached, with console, exceptions and the network log reported; its session id."
        t = self.send("Target.createTarget", url="about:blank")["targetId"]
        s = self.send("Target.attachToTarget", targetId=t, flatten=True)["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable", "DOM.enable", "CSS.enable"): self.send(m, s)
        return s

    def open(self, s: str, url: str, timeout: float = 30) -> list[str]:
        "Load `url` in tab `s` until its load event; the console errors seen meanwhile."
        while not self.events.empty(): self.events.get()
        self.send("Page.navigate", s, url=url)
        errors, end = [], time.time() + timeout
        while True:
            e = self.events.get(timeout=max(0.1, end - time.time()))
            if e.get("sessionId") != s: continue
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown": errors.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"): errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error": errors.append(f"{p['entry']['text']} {p['entry'].get('url', '')}")
            elif e["method"] == "Page.loadEventFired": return errors

    def js(self, s: str, expr: str):
        r = self.send("Runtime.evaluate", s, expression=expr, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r: raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def unfonted(self, s: str, selector: str) -> list[str]:
        "The elements matching `selector` whose text the browser drew without any web font (so, here, Hangul as boxes)."
        root = self.send("DOM.getDocument", s, depth=0)["root"]["nodeId"]
        bad = []
        for n in self.send("DOM.querySelectorAll", s, nodeId=root, selector=selector)["nodeIds"]:
            fonts = self.send("CSS.getPlatformFontsForNode", s, nodeId=n)["fonts"]
            if fonts and not any(f["isCustomFont"] for f in fonts): bad.append(self.send("DOM.getOuterHTML", s, nodeId=n)["outerHTML"][:80])
        return bad

    def close(self):
        try: self.send("Browser.close", timeout=5)
        except Exception: pass
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
        os.close(self._w); os.close(self._r)

# What the test reads from each page. Hangul drawn as boxes: a glyph that comes out exactly like U+10FFFD (a
# noncharacter, which no font has) is the missing-glyph box. The control font has no Hangul, which proves the check.
PAGE_JS = r"""(async () => {
  const fam = getComputedStyle(document.body).fontFamily;
  await document.fonts.ready; await document.fonts.load(`32px ${fam}`, "가");
  const draw = (ch, f) => { const c = document.createElement("canvas"); c.width = c.height = 48;
    const x = c.getContext("2d"); x.font = `32px ${f}`; x.fillText(ch, 4, 36); return c.toDataURL(); };
  const boxes = f => { const none = draw("\u{10FFFD}", f); return [..."가법한글"].filter(ch => draw(ch, f) === none).length; };
  const text = document.querySelector("main").innerText;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), marked = new Set();
  for (let n; (n = walk.nextNode()) && marked.size < 80;)                 // elements whose own text has Hangul: asked below which fonts drew them
    if (/[가-힣]/.test(n.data) && n.parentElement.offsetParent !== null) marked.add(n.parentElement);
  [...marked].forEach((e, i) => e.setAttribute("data-hangul", i));
  return {ids: [...document.querySelectorAll("[id], a[name]")].map(e => e.id || e.name),
          links: [...document.querySelectorAll("a[href]")].map(a => a.href),
          images: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src.slice(0, 100)),
          hangul: (text.match(/[가-힣]/g) || []).length, boxes: boxes(fam), control: boxes('"DejaVu Sans"'),
          prev_next: document.querySelectorAll("nav.pager a").length, search: !!document.querySelector("#search"),
          chars: [...new Set(document.body.innerText)].join(""), code: document.querySelectorAll("main div.sourceCode").length,
          outputs: document.querySelectorAll("main .output").length,
          plots: [...document.querySelectorAll("main img.output")].filter(i => i.complete && i.naturalWidth > 0).length};
})()"""

@pytest.fixture(scope="module")
def site(tmp_path_factory): return built_site(tmp_path_factory)

@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(type("Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown(); httpd.server_close()

@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    fc = tmp_path_factory.mktemp("fontconfig")          # no Korean font for Chromium: only DejaVu
    (fc / "fonts.conf").write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><dir>{DEJAVU}</dir>'
                                   f'<include ignore_missing="yes">/etc/fonts/conf.d</include><cachedir>{fc / "cache"}</cachedir></fontconfig>', encoding="utf-8")
    b = Chromium(tmp_path_factory.mktemp("profile"), {**os.environ, "FONTCONFIG_FILE": str(fc / "fonts.conf")})
    yield b
    b.close()

PLACEHOLDER = re.compile(r"^https?://(?:[\w.-]+\.)?(?:example\.(?:org|com|net)|github\.com/cragrag)(?:[/:?#]|$)")

def drawable(site: Path) -> set[int] | None:
    "The code points the site's pages can draw here: its font's (within the `unicode-range` its stylesheet gives) and DejaVu's."
    try: from fontTools import ttLib
    except ImportError: return None
    cps, css = set(), (site / "assets" / "site.css").read_text(encoding="utf-8")
    if (font := site / "assets" / "fonts" / "NanumGothic-subset.ttf").is_file() and (m := re.search(r"unicode-range:([^;}]+)", css)):
        ranges = [[int(x, 16) for x in r.strip().removeprefix("U+").split("-")] for r in m.group(1).split(",")]
        cps = {c for c in ttLib.TTFont(font).getBestCmap() if any(r[0] <= c <= r[-1] for r in ranges)}
    for f in DEJAVU.glob("*.ttf"): cps |= set(ttLib.TTFont(f).getBestCmap())
    return cps

def boxes(chars: str, cps: set[int] | None) -> str:
    "The characters of `chars` that no font in `cps` draws (whitespace and invisible marks aside)."
    import unicodedata
    return "".join(sorted(c for c in chars if cps is not None and ord(c) not in cps and not c.isspace()
                          and unicodedata.category(c) not in ("Mn", "Me", "Cf", "Cc")))

def page_of(nb: str) -> str:
    "The site page of a notebook path relative to nbs/ (`course/98_exercises.ipynb` -> `course/exercises.html`)."
    return (Path(nb).parent / (re.sub(r"^\d+_", "", Path(nb).stem) + ".html")).as_posix()

@functools.cache
def executed_pages() -> set[str]:
    "The pages of the notebooks the docs build runs (`EXECUTE`): lessons and the course's module pages alike."
    from cragrag.tools.docsite import EXECUTE
    nbs = ROOT / "nbs"
    return {page_of(p.relative_to(nbs).as_posix()) for g in EXECUTE for p in nbs.glob(g)}

@functools.cache
def expected_plots() -> dict[str, int]:
    """The plots each executed notebook's page should show: `{page: image outputs the page renders}`, read from the build's cache
    (never run here: forking this threaded process could deadlock; a notebook changed since the build is left out)."""
    import json
    from cragrag.tools.docsite import EXECUTE, LIBRARY, _code_md, cached_execution, code_fingerprint
    out, nbs, fp = {}, ROOT / "nbs", code_fingerprint()
    for path in sorted({p for g in EXECUTE + LIBRARY for p in nbs.glob(g) if not any(x.startswith((".", "_")) for x in p.relative_to(nbs).parts)}):
        if not (f := cached_execution(path, fingerprint=fp)): continue
        ran = json.loads(f.read_text(encoding="utf-8"))
        out[page_of(path.relative_to(nbs).as_posix())] = sum(
            m.startswith("![](data:image/png") for c in ran["cells"] if c["cell_type"] == "code"
            for m in _code_md("".join(c["source"]), c.get("outputs", [])))
    return out

def page_problems(page: str, r: dict, html: str, cps: set[int] | None) -> list[str]:
    "What the new checks find wrong with one page, from what `PAGE_JS` read of it and its HTML."
    problems = [f"{page}: links to a placeholder host: {link}" for link in r["links"] if PLACEHOLDER.match(link)]
    if bad := boxes(r["chars"], cps): problems.append(f"{page}: characters no font here draws (boxes): {bad!r}")
    if page in executed_pages() and r["code"] and not r["outputs"]:
        problems.append(f"{page}: an executed page with {r['code']} code blocks and no outputs")
    if page in executed_pages() and 'class="widget-note' in html:
        problems.append(f"{page}: a widget shown as a note, without its static table")
    if r["plots"] < (want := expected_plots().get(page, 0)): problems.append(f"{page}: {want} plots in the notebook, {r['plots']} on the page")
    return problems

def test_every_page_in_a_browser(site, served, browser):
    t0, s = time.time(), browser.tab()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "pagefind" not in p.parts)
    seen, anchors, problems, cps = {}, [], [], drawable(site)
    for page in pages:
        errors = browser.open(s, served + page)
        r = browser.js(s, PAGE_JS); seen[page] = set(r["ids"])
        problems += [f"{page}: console error: {e}" for e in errors]
        problems += [f"{page}: image not loaded: {i}" for i in r["images"]]
        if DEJAVU.is_dir() and r["control"] != 4: problems.append(f"{page}: the box check cannot see boxes ({r['control']} of 4 with DejaVu only)")
        if r["hangul"] and r["boxes"]: problems.append(f"{page}: Hangul drawn as boxes ({r['boxes']} of 4 test syllables)")
        problems += [f"{page}: Hangul drawn as boxes in {e}" for e in browser.unfonted(s, "[data-hangul]")]
        if r["prev_next"] < 1: problems.append(f"{page}: no previous/next links")
        problems += page_problems(page, r, (site / page).read_text(encoding="utf-8"), cps)
        for link in r["links"]:
            u = urlsplit(link)
            if link.startswith("https://cragrag.github.io"): problems.append(f"{page}: links to the public site: {link}")
            if not link.startswith(served): continue
            target = unquote(u.path[1:]) or "index.html"
            if not (site / target).is_file(): problems.append(f"{page}: broken link {link}")
            elif u.fragment: anchors.append((page, target, unquote(u.fragment)))
    problems += [f"{page}: missing anchor {t}#{a}" for page, t, a in anchors if t in seen and a not in seen[t]]
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} problems)"
    print(f"{len(pages)} pages checked in {time.time() - t0:.1f}s")

def test_phone_and_desktop_layout(site, served, browser):
    "On a phone (390 px) the sidebar folds behind a button, so the page title is near the top; on a desktop the table of contents stays in view."
    pages = [p for p in site.rglob("*.html") if "pagefind" not in p.parts and 'id="TOC"' in p.read_text(encoding="utf-8")]
    page = max(pages, key=lambda p: p.stat().st_size).relative_to(site).as_posix()     # the longest page with a table of contents
    s = browser.tab()
    browser.send("Emulation.setDeviceMetricsOverride", s, width=390, height=844, deviceScaleFactor=1, mobile=True)
    browser.open(s, served + page)
    look = """(() => ({top: document.querySelector("main h1").getBoundingClientRect().top,
                   nav: getComputedStyle(document.getElementById("navbody")).display, button: getComputedStyle(document.querySelector("button.menu")).display,
                   expanded: document.querySelector("button.menu").getAttribute("aria-expanded")}))()"""
    r = browser.js(s, look)
    assert r["top"] < 150 and r["nav"] == "none" and r["button"] != "none", (page, r)
    browser.js(s, 'document.querySelector("button.menu").click()')
    r = browser.js(s, look)
    assert r["nav"] == "block" and r["expanded"] == "true", (page, r)
    browser.send("Emulation.setDeviceMetricsOverride", s, width=1400, height=800, deviceScaleFactor=1, mobile=False)
    browser.open(s, served + page)
    r = browser.js(s, """(async () => { window.scrollTo(0, document.body.scrollHeight / 2);
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
        const b = document.getElementById("TOC").getBoundingClientRect(); return {top: b.top, height: b.height, y: scrollY, h: innerHeight}; })()""")
    assert r["y"] > 400 and 0 <= r["top"] < r["h"] and r["height"] > 0, (page, r)      # scrolled half way, the contents still in view

def test_no_page_scrolls_sideways(site, served, browser):
    "At 1280 px a wide table scrolls inside itself: the page's main column never overflows (the start page's lesson table did)."
    s = browser.tab()
    browser.send("Emulation.setDeviceMetricsOverride", s, width=1280, height=800, deviceScaleFactor=1, mobile=False)
    wide = []
    for page in ["tutorials/start_here.html", "index.html", "tutorials/score_gate.html", "05_design.html", "core/config.html"]:
        if not (site / page).is_file(): continue
        browser.open(s, served + page)
        r = browser.js(s, "(() => { const m = document.querySelector('main'); return {sw: m.scrollWidth, cw: m.clientWidth, dw: document.documentElement.scrollWidth, w: innerWidth}; })()")
        if r["sw"] > r["cw"] + 1 or r["dw"] > r["w"] + 1: wide.append((page, r))
    assert not wide, wide

def test_search_and_local_copy(site, served, browser):
    "pagefind's index answers a Korean query; from file:// (a local copy) Hangul still has its font."
    s = browser.tab()
    if (site / "pagefind" / "pagefind.js").is_file():
        browser.open(s, served + "index.html")
        hits = browser.js(s, """(async () => { const pf = await import("./pagefind/pagefind.js");
            const r = await pf.search("보험계약"); return Promise.all(r.results.slice(0, 5).map(x => x.data().then(d => d.url))); })()""")
        assert hits and all(not h.startswith("http") for h in hits), hits
        assert browser.js(s, "!!document.querySelector('#search .pagefind-ui')"), "no search box"
        first = lambda q: browser.js(s, """(async () => { const pf = await import("./pagefind/pagefind.js");
            const r = await pf.search(%s); const d = await r.results[0].data(); return {url: d.url, excerpt: d.excerpt}; })()""" % json.dumps(q))
        hit = first("재시도 상한")                          # a lesson's own words find that lesson first
        assert hit["url"].endswith("tutorials/judge_and_loop_safety.html"), hit
        hit = first("보험금 청구")                          # prose before test lines
        assert "test_eq" not in hit["excerpt"] and "assert" not in hit["excerpt"], hit
        browser.open(s, served + "index.html?q=" + quote("보험계약"))   # a shared search link opens with its results
        n = browser.js(s, """(async () => { for (let i = 0; i < 100; i++) { const n = document.querySelectorAll('#search .pagefind-ui__result').length;
            if (n) return n; await new Promise(r => setTimeout(r, 100)); } return 0; })()""")
        assert n > 0, "?q= did not open the search"
    errors = browser.open(s, (site / "decide" / "crag.html").as_uri())
    r = browser.js(s, PAGE_JS)
    assert r["hangul"] and r["boxes"] == 0, r["boxes"]
    assert not [e for e in errors if "pagefind" not in e], errors      # (pagefind's own fetches need HTTP)

def test_screenshots(site, served, browser):
    """The pages as a reader sees them, when CRAGRAG_SITE_SHOTS names a folder: the home page, an API page and lesson 5 scrolled
    to its plot, light and dark at 1280 px; lesson 5 on a phone (390 px), and with its menu open."""
    if not (out := os.environ.get("CRAGRAG_SITE_SHOTS")): pytest.skip("set CRAGRAG_SITE_SHOTS=<folder> to keep screenshots")
    import base64
    Path(out).mkdir(parents=True, exist_ok=True)
    s, lesson = browser.tab(), "tutorials/score_gate.html"
    def shot(name: str, page: str, scheme: str = "light", width: int = 1280, height: int = 900, then: str | None = None):
        browser.send("Emulation.setDeviceMetricsOverride", s, width=width, height=height, deviceScaleFactor=1, mobile=width < 600)
        browser.send("Emulation.setEmulatedMedia", s, features=[{"name": "prefers-color-scheme", "value": scheme}])
        browser.open(s, served + page); browser.js(s, "document.fonts.ready.then(() => 1)")
        if then: browser.js(s, f"(async () => {{ {then}; await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); return 1; }})()")
        png = browser.send("Page.captureScreenshot", s, format="png")["data"]
        (Path(out) / f"{name}.png").write_bytes(base64.b64decode(png))
    to_plot = 'document.querySelector("main img.output, main .output img").scrollIntoView({block: "center"})'
    for scheme in ("light", "dark"):
        shot(f"site-home-{scheme}", "index.html", scheme)
        shot(f"site-api-{scheme}", "decide/crag.html", scheme)
        shot(f"site-lesson5-plot-{scheme}", lesson, scheme, then=to_plot)
    shot("site-lesson5-phone", lesson, width=390, height=844)
    shot("site-lesson5-phone-menu", lesson, width=390, height=844, then='document.querySelector("button.menu").click()')
    assert len(list(Path(out).glob("site-*.png"))) >= 8

def test_api_docs_offline(browser):
    "The HTTP API's /docs (Swagger UI) and /redoc render from the server's own files: nothing is fetched from elsewhere."
    fastapi, uvicorn = pytest.importorskip("fastapi"), pytest.importorskip("uvicorn")
    from cragrag.serve.server import add_local_docs, docs_assets
    if docs_assets() is None: pytest.skip("fastapi-offline not installed: /docs is the plain page")
    app = add_local_docs(fastapi.FastAPI(title="cragrag", docs_url=None, redoc_url=None))
    @app.get("/health")
    def health() -> dict: return {"status": "ok"}
    import socket
    with socket.socket() as so: so.bind(("127.0.0.1", 0)); port = so.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    try:
        while not server.started: time.sleep(0.05)
        s = browser.tab()
        browser.send("Network.enable", s)
        for path, ready in [("/docs", "document.querySelector('.swagger-ui .opblock-summary-path')"),
                            ("/redoc", "document.querySelector('[data-section-id] h2, h1')")]:
            errors = browser.open(s, f"http://127.0.0.1:{port}{path}")
            found = browser.js(s, f"""new Promise(r => {{ let n = 0; const t = setInterval(() => {{ const e = {ready};
                if (e || ++n > 100) {{ clearInterval(t); r(e ? e.textContent : null); }} }}, 50); }})""")
            urls = browser.js(s, "performance.getEntriesByType('resource').map(e => e.name)")
            assert found, f"{path} rendered nothing"
            assert not errors, (path, errors)
            assert all(u.startswith(f"http://127.0.0.1:{port}/") or u.startswith("data:") for u in urls), (path, urls)
    finally: server.should_exit = True
