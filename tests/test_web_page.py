"""The question page (`GET /` of `cragrag serve`) in headless Chromium, against real servers on the demo index.

What a person sees is checked, not the DOM's shape: an answerable question shows its cited article (title and number)
with the supporting span marked, the gate bar's best-score marker sits where the score says, a colloquial question
shows its rewrites, an out-of-corpus question is a refusal with its reason in Korean. No request leaves 127.0.0.1, no
console error or exception, and the Hangul is drawn by the page's own font (Chromium runs with a fontconfig that holds
only DejaVu, as in test_site_browser.py). A `?q=` link asks on load, the page at 390 px has no horizontal scroll, and
with keys the page asks for a key (a password field), keeps it out of the URL, shows the tenant, and asks again after a
401. The trace viewer draws its charts (and wants an admin key). One subprocess runs two servers on one indexed
pipeline: one without keys, one with. Set CRAGRAG_PAGE_SHOTS=<folder> to keep screenshots (desktop light and dark,
phone, traces)."""
import base64, json, os, socket, subprocess, sys, textwrap, time, pytest
from pathlib import Path
from urllib.parse import quote

from conftest import _wait_until_serving
from test_site_browser import CHROMIUM, Chromium, browser   # noqa: F401 (browser: the same fixture, Chromium with only DejaVu fonts)

pytest.importorskip("fastapi"); pytest.importorskip("uvicorn")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="chromium not installed (apt-get install chromium)")

ANSWERABLE, COLLOQUIAL, OUT_OF_CORPUS = "보험계약은 언제 성립하나요?", "보험 깨면 돈 돌려받나요", "화성 이주 보험은 얼마인가요?"

SERVERS = textwrap.dedent("""
    import sys, threading, uvicorn
    from cragrag.answering.pipeline import Pipeline
    from cragrag.serve.auth import load_keys
    from cragrag.serve.server import create_app
    open_port, keyed_port, trace, keyfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    p = Pipeline(qdrant_path=":memory:", trace_dir=trace, heavy_lane="thread")
    p.index(progress=False)
    keyed = create_app(p, keys=load_keys(keyfile))
    t = threading.Thread(target=uvicorn.Server(uvicorn.Config(keyed, host="127.0.0.1", port=keyed_port, log_level="warning")).run, daemon=True)
    t.start()
    uvicorn.Server(uvicorn.Config(create_app(p), host="127.0.0.1", port=open_port, log_level="warning")).run()
    """)

def _port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    "Two servers on one indexed pipeline: `open` (no keys) and `keyed` (a reader key for team-a, an admin key for ops)."
    from cragrag.serve.auth import KeyRing, Role, save_keys
    work = tmp_path_factory.mktemp("page")
    ring = KeyRing()
    keys = {"reader": ring.add("team-a")[0], "admin": ring.add("ops", Role.ADMIN)[0]}
    keyfile = save_keys(ring, work / "keys.json")
    ports = _port(), _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRAGRAG_API_KEYS")}
    log = (work / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-c", SERVERS, str(ports[0]), str(ports[1]), str(work / "trace"), str(keyfile)],
                            env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        proc.stdout = (work / "server.log").open()
        for port in ports: _wait_until_serving(proc, f"http://127.0.0.1:{port}")
        yield {"open": f"http://127.0.0.1:{ports[0]}/", "keyed": f"http://127.0.0.1:{ports[1]}/", "keys": keys}
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()

class Page:
    "A tab on the page that keeps what the tab did: console errors, exceptions, and every URL it requested."
    def __init__(self, b: Chromium, width: int = 1280, height: int = 900, scheme: str = "light"):
        self.b, self.s = b, b.tab()
        b.send("Network.enable", self.s)
        self.size(width, height, scheme)
        self.errors, self.urls = [], []

    def size(self, width: int, height: int = 900, scheme: str = "light"):
        self.b.send("Emulation.setDeviceMetricsOverride", self.s, width=width, height=height, deviceScaleFactor=1, mobile=width < 500)
        self.b.send("Emulation.setEmulatedMedia", self.s, features=[{"name": "prefers-color-scheme", "value": scheme}])

    def _drain(self):
        "Read the events so far: errors, and the URL of each request (the page's own fetches and everything it loads)."
        while not self.b.events.empty():
            e = self.b.events.get()
            if e.get("sessionId") != self.s: continue
            p = e.get("params", {})
            if e["method"] == "Network.requestWillBeSent": self.urls.append(p["request"]["url"])
            elif e["method"] == "Runtime.exceptionThrown": self.errors.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"): self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error": self.errors.append(f"{p['entry']['text']} {p['entry'].get('url', '')}")

    def open(self, url: str):
        self.js("window.__left = true")                                       # (set on the page being left: the new one lacks it)
        self.b.send("Page.navigate", self.s, url=url)
        self.wait("!window.__left && document.readyState === 'complete' && !!document.body")

    def js(self, expr: str):
        v = self.b.js(self.s, expr); self._drain(); return v

    def wait(self, cond: str, timeout: float = 120):
        "Wait until the JS expression `cond` is truthy (answers on a loaded CPU take seconds); its value."
        end = time.time() + timeout
        while time.time() < end:
            try: v = self.b.js(self.s, f"(() => {{ try {{ return {cond}; }} catch (e) {{ return null; }} }})()")
            except RuntimeError: v = None
            self._drain()
            if v: return v
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {cond}; errors: {self.errors}")

    def ask(self, q: str, mode: str = ""):
        "Type `q` in the box (as a person does), press Enter, and wait for the answer."
        self.js("document.querySelector('#result').hidden = true; document.querySelector('#q').focus(); "
                f"document.querySelector('#q').value = ''; document.querySelector('#mode').value = {json.dumps(mode)}; 1")
        self.b.send("Input.insertText", self.s, text=q)
        for t in ("keyDown", "keyUp"):
            self.b.send("Input.dispatchKeyEvent", self.s, type=t, key="Enter", code="Enter", windowsVirtualKeyCode=13, **({"text": "\r"} if t == "keyDown" else {}))
        self.wait("!document.querySelector('#result').hidden && !document.querySelector('#result').hasAttribute('aria-busy')")
        return self.js("document.fonts.ready.then(() => 1)")

    def seen(self) -> dict:
        "What a person sees after an answer, as text and geometry."
        return self.js(r"""(() => {
          const t = s => { const e = document.querySelector(s); return e ? e.innerText : null; };
          const bar = document.querySelector('#gate-bar'), best = document.querySelector('#gate-best');
          const at = e => { if (!e || !bar) return null; const b = bar.getBoundingClientRect(), r = e.getBoundingClientRect();
                            return (r.left + r.width / 2 - b.left) / b.width * 100; };
          return {answer: t('#answer-box'), cited: [...document.querySelectorAll('.sources > .src .src-title')].map(e => e.innerText),
                  found: [...document.querySelectorAll('.sources .src-title')].map(e => e.textContent),
                  marks: [...document.querySelectorAll('.sources > .src mark')].map(e => e.innerText),
                  refusal: t('#refusal-reason'), gate: t('#gate-said'), attempts: t('#attempts'), retries: t('#retries'),
                  best_at: at(best), best: best ? +best.dataset.value : null, pass_at: at(document.querySelector('#gate-pass')),
                  pass: document.querySelector('#gate-pass') ? +document.querySelector('#gate-pass').dataset.value : null,
                  route: t('.route'), risk: t('#risk'), verdict: t('#verdict'), ledger: t('#ledger'),
                  share: (document.querySelector('.share-link') || {}).href || null, status: t('#status'),
                  live: (document.querySelector('#result') || {}).getAttribute('aria-live')};
        })()""")

    def fonts(self, selector: str) -> list[dict]:
        "The platform fonts Chromium drew the text of the first element matching `selector` with."
        root = self.b.send("DOM.getDocument", self.s, depth=0)["root"]["nodeId"]
        node = self.b.send("DOM.querySelector", self.s, nodeId=root, selector=selector)["nodeId"]
        assert node, selector
        return self.b.send("CSS.getPlatformFontsForNode", self.s, nodeId=node)["fonts"]

    def shot(self, path: Path):
        h = self.js("document.documentElement.scrollHeight"); w = self.js("document.documentElement.clientWidth")
        png = self.b.send("Page.captureScreenshot", self.s, format="png", captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": w, "height": min(h, 3000), "scale": 1})["data"]
        path.write_bytes(base64.b64decode(png))

def _local(urls: list[str], base: str) -> list[str]:
    "The requested URLs that leave the server under test (data: URLs are the page's own)."
    return [u for u in urls if not (u.startswith(base) or u.startswith("data:") or u == "about:blank")]

def test_questions_on_the_page(servers, browser):
    base = servers["open"]
    pg = Page(browser)
    pg.open(base)
    assert pg.js("document.activeElement.id") == "q", "the question box has the focus on load"
    assert pg.js("document.querySelector('label[for=q]') !== null && document.querySelector('#result').getAttribute('aria-live') === 'polite'")

    pg.ask(ANSWERABLE)
    a = pg.seen()
    assert a["refusal"] is None and a["cited"], a
    assert any("상법" in c and "제638조" in c for c in a["cited"]), a["cited"]            # 「상법」 제638조의2(보험계약의 성립)
    assert a["marks"] and any(len(m) > 10 for m in a["marks"]), "no supporting span marked in the cited article"
    assert a["best"] is not None and abs(a["best_at"] - a["best"] * 100) <= 2, (a["best_at"], a["best"])
    assert a["pass"] is not None and abs(a["pass_at"] - a["pass"] * 100) <= 2, (a["pass_at"], a["pass"])
    assert "통과" in a["gate"] and "질문 유형" in a["route"] and "검색 방식" in a["route"], a
    assert a["risk"], "no verification shown"
    assert a["share"] and "q=" in a["share"] and "key" not in a["share"].lower(), a["share"]
    fonts = pg.fonts("#answer-text .claim")
    assert fonts and all(f["isCustomFont"] for f in fonts if f["glyphCount"]), f"Hangul not drawn by the page's font: {fonts}"
    assert not any("DejaVu" in f["familyName"] for f in fonts if f["glyphCount"] > 5), fonts

    pg.ask(COLLOQUIAL)
    c = pg.seen()
    assert c["refusal"] is None and c["cited"], c
    assert c["attempts"] and "바꾼 질문" in c["attempts"], c["attempts"]                  # the rewrite that found the article
    assert abs(c["best_at"] - c["best"] * 100) <= 2

    pg.ask(OUT_OF_CORPUS)
    o = pg.seen()
    assert o["refusal"] and any("\uac00" <= ch <= "\ud7a3" for ch in o["refusal"]), o
    assert "no_topic" not in o["answer"] and "_" not in o["refusal"], o["refusal"]     # words, not a code
    assert "답하지 않았습니다" in o["answer"] and not o["cited"], o
    if o["best"] is not None: assert abs(o["best_at"] - o["best"] * 100) <= 2

    pg.ask(ANSWERABLE, mode="sufficiency")
    s = pg.seen()
    assert s["verdict"] and s["ledger"] and ("충족" in s["ledger"] or "누락" in s["ledger"]), s
    assert "mode=sufficiency" in s["share"], s["share"]

    assert not _local(pg.urls, base), _local(pg.urls, base)
    assert not pg.errors, pg.errors

def test_link_asks_on_load_and_phone_width(servers, browser):
    base = servers["open"]
    pg = Page(browser, 390, 844)
    pg.open(base + "?q=" + quote(ANSWERABLE) + "&top_k=5&filters=" + quote(json.dumps({"doc_id": "상법_법률"})))
    pg.wait("!document.querySelector('#result').hidden && !document.querySelector('#result').hasAttribute('aria-busy')")
    pg.js("document.fonts.ready.then(() => 1)")
    a = pg.seen()
    assert a["cited"] and all("「상법」" in c for c in a["found"]), a["found"]            # the filter went with the question
    assert pg.js("document.querySelector('#top_k').value") == "5"
    assert pg.js("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
        pg.js("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert not _local(pg.urls, base) and not pg.errors, (pg.urls, pg.errors)

def test_keyboard_only(servers, browser):
    "Tab from the top reaches the question box and the button; Enter in the box asks; the focus ring is visible."
    pg = Page(browser)
    pg.open(servers["open"])
    order = []                                            # (the focus starts in the question box; Tab goes round the page)
    for _ in range(10):
        browser.send("Input.dispatchKeyEvent", pg.s, type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
        browser.send("Input.dispatchKeyEvent", pg.s, type="keyUp", key="Tab", code="Tab", windowsVirtualKeyCode=9)
        order.append(pg.js("(() => { const e = document.activeElement; const s = getComputedStyle(e);"
                           " return [e.id || e.className || e.tagName.toLowerCase(), s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2]; })()"))
    ids = [o[0] for o in order]
    i = ids.index("skip")                                 # from the top: the skip link, the question box, its button, the settings
    assert ids[i + 1:i + 4] == ["q", "ask-button", "summary"] or ids[i + 1:i + 4] == ["q", "ask-button", ""], ids
    assert all(vis for name, vis in order if name != "body"), order
    pg.ask(ANSWERABLE)                                    # typed into the box, Enter pressed: asked
    assert pg.seen()["cited"]
    assert not pg.errors, pg.errors

def test_keys(servers, browser):
    "With keys: the page asks for a key (a password field), shows the tenant, keeps the key out of the URL; a 401 asks again."
    base, keys = servers["keyed"], servers["keys"]
    pg = Page(browser)
    pg.open(base)
    pg.wait("!document.querySelector('#key-form').hidden")
    assert pg.js("document.querySelector('#key').type") == "password" and pg.js("document.activeElement.id") == "key"
    assert pg.js("document.querySelector('label[for=key]') !== null")
    pg.js("document.querySelector('#key').focus(); 1")
    browser.send("Input.insertText", pg.s, text=keys["reader"])
    for t in ("keyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", pg.s, type=t, key="Enter", code="Enter", windowsVirtualKeyCode=13, **({"text": "\r"} if t == "keyDown" else {}))
    assert "team-a" in pg.wait("!document.querySelector('#who').hidden && document.querySelector('#who').innerText")
    assert pg.js("sessionStorage.getItem('cragrag.key')") == keys["reader"]
    pg.ask(ANSWERABLE)                                                        # (team-a has no documents: a refusal is fine)
    assert pg.seen()["answer"], "no answer shown with a key"
    assert keys["reader"] not in pg.js("location.href") and not any(keys["reader"] in u for u in pg.urls)
    # the key is revoked/wrong: the next request's 401 clears it and asks again
    pg.js("sessionStorage.setItem('cragrag.key', 'crg_wrong'); 1")
    pg.js("document.querySelector('#q').value = " + json.dumps(ANSWERABLE) + "; document.querySelector('#ask').requestSubmit(); 1")
    pg.wait("!document.querySelector('#key-form').hidden")
    assert pg.js("sessionStorage.getItem('cragrag.key')") is None
    assert not _local(pg.urls, base), _local(pg.urls, base)
    assert not [e for e in pg.errors if "401" not in e], pg.errors           # (Chromium logs a 401 response as a console error)

def test_traces_page(servers, browser):
    "The trace viewer: the open server's charts over the answers the tests asked; on the keyed server a reader key is not enough."
    pg = Page(browser)
    pg.open(servers["open"] + "traces")
    pg.wait("document.querySelectorAll('#charts svg').length === 4")
    assert pg.js("[...document.querySelectorAll('#charts svg')].every(s => s.getAttribute('aria-label'))")
    assert pg.js("document.querySelectorAll('#c-latency polyline').length") == 1
    assert not pg.errors and not _local(pg.urls, servers["open"]), (pg.errors, pg.urls)

    base, keys = servers["keyed"], servers["keys"]
    pg = Page(browser)
    pg.open(base + "traces")
    pg.wait("!document.querySelector('#key-form').hidden")
    pg.js(f"document.querySelector('#key').value = {json.dumps(keys['reader'])}; document.querySelector('#key-form').requestSubmit(); 1")
    pg.wait("!document.querySelector('#key-form').hidden && document.querySelector('#key-error').innerText.includes('관리자')")
    pg.js(f"document.querySelector('#key').value = {json.dumps(keys['admin'])}; document.querySelector('#key-form').requestSubmit(); 1")
    pg.wait("document.querySelectorAll('#charts svg').length === 4")
    assert "ops" in pg.js("document.querySelector('#who').innerText")
    assert not _local(pg.urls, base), _local(pg.urls, base)
    assert not [e for e in pg.errors if "401" not in e and "403" not in e], pg.errors

def test_screenshots(servers, browser):
    "Desktop light and dark, phone (390 px) of an answered question, and the trace viewer, when CRAGRAG_PAGE_SHOTS names a folder."
    if not (out := os.environ.get("CRAGRAG_PAGE_SHOTS")): pytest.skip("set CRAGRAG_PAGE_SHOTS=<folder> to keep screenshots")
    Path(out).mkdir(parents=True, exist_ok=True)
    url = servers["open"] + "?q=" + quote(COLLOQUIAL)
    for name, width, height, scheme in [("page-desktop-light", 1280, 900, "light"), ("page-desktop-dark", 1280, 900, "dark"), ("page-phone", 390, 844, "light")]:
        pg = Page(browser, width, height, scheme)
        pg.open(url)
        pg.wait("!document.querySelector('#result').hidden && !document.querySelector('#result').hasAttribute('aria-busy')")
        pg.js("document.fonts.ready.then(() => new Promise(r => setTimeout(r, 200)))")
        pg.shot(Path(out) / f"{name}.png")
    import httpx                                          # (answers of each kind for the trace viewer to draw)
    for q, mode in [(ANSWERABLE, None), (OUT_OF_CORPUS, None), (ANSWERABLE, "sufficiency"), ("제638조의2", None), ("자동차 운전면허 갱신 기간은?", None)]:
        httpx.post(servers["open"] + "answer", json={"query": q, "answer_mode": mode}, timeout=120).raise_for_status()
    pg = Page(browser, 1280, 900, "light")
    pg.open(servers["open"] + "traces")
    pg.wait("document.querySelectorAll('#charts svg').length === 4")
    pg.js("document.fonts.ready.then(() => new Promise(r => setTimeout(r, 200)))")
    pg.shot(Path(out) / "traces.png")
