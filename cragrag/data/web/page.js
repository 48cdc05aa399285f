/* cragrag's question page (index.html) and the key handling the trace viewer shares (traces.html loads this first).
   Plain script, no framework, nothing fetched from outside the server; every URL is relative, so the page works
   behind a reverse proxy under a sub-path. The API key lives in sessionStorage only: never in a URL. */
(() => {
"use strict";
const KEY = "cragrag.key";

// ---- small DOM helpers: text always goes in as text (textContent), never as HTML --------------------------------
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat(Infinity)) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
  return e;
}
const $ = (s, r = document) => r.querySelector(s);
const pct = x => `${(Math.round(x * 1000) / 10).toFixed(1).replace(/\.0$/, "")}%`;
const num = x => (x === null || x === undefined || Number.isNaN(+x)) ? "—" : (+x).toFixed(2);

// ---- the key: asked once, kept for this tab, sent as a bearer token ---------------------------------------------
const auth = {
  get() { try { return sessionStorage.getItem(KEY); } catch (e) { return null; } },
  set(k) { try { sessionStorage.setItem(KEY, k); } catch (e) { /* storage off: the key lasts until reload */ } auth._mem = k; },
  clear() { try { sessionStorage.removeItem(KEY); } catch (e) { /* nothing stored */ } auth._mem = null; },
  key() { return auth.get() || auth._mem || null; },
  headers(extra) { const k = auth.key(); return Object.assign({}, extra || {}, k ? {Authorization: `Bearer ${k}`} : {}); },
  _mem: null,
};

function api(path, opts = {}) {
  return fetch(path, Object.assign({}, opts, {headers: auth.headers(opts.headers), credentials: "same-origin", cache: "no-store"}));
}

// Show the key form and wait for a key. `message`: why it is asked again (a refused key), or null the first time.
function askKey(message, title) {
  const form = $("#key-form"), input = $("#key"), err = $("#key-error");
  form.hidden = false;
  if (title) $("#key-title").textContent = title;
  err.hidden = !message; err.textContent = message || "";
  input.value = "";
  input.focus();
  return new Promise(resolve => {
    form.onsubmit = ev => {
      ev.preventDefault();
      const k = input.value.trim();
      if (!k) { input.focus(); return; }
      auth.set(k); input.value = ""; form.hidden = true; form.onsubmit = null;
      resolve(k);
    };
  });
}

// Who the page speaks for: GET whoami, asking for a key while the server says 401. Null when the server cannot be reached.
async function identify(status) {
  let asked = false;
  for (;;) {
    let r;
    try { r = await api("whoami"); }
    catch (e) { status(`서버에 연결할 수 없습니다. 잠시 후 새로 고침하세요.`, true); return null; }
    if (r.status === 401) {
      const had = !!auth.key() || asked;
      auth.clear(); asked = true;
      await askKey(had ? "이 키로는 들어갈 수 없습니다(틀렸거나 만료·폐기된 키). 다시 입력하세요." : null);
      continue;
    }
    if (r.status === 404) { showWho({keys: false}); return {keys: false}; }   // an older server without /whoami
    if (!r.ok) { status(`서버가 응답하지 않습니다 (HTTP ${r.status}).`, true); return null; }
    const w = await r.json();
    showWho(w);
    return w;
  }
}

const ROLE_KO = {reader: "조회", admin: "관리자", writer: "색인", indexer: "색인"};
function showWho(w) {
  const who = $("#who");
  if (!who) return;
  const docs = $("#docs-link");
  if (docs) docs.hidden = !!w.keys;
  if (!w.keys) { who.hidden = true; return; }
  const text = $("#who-text");
  text.replaceChildren("테넌트 ", h("strong", {id: "tenant", text: w.tenant || "(전체)"}),
                       w.role ? ` · 권한 ${ROLE_KO[w.role] || w.role}` : "");
  const tl = $("#traces-link");
  if (tl) tl.hidden = w.role !== "admin";
  who.hidden = false;
  const forget = $("#key-forget");
  if (forget && !forget.onclick) forget.onclick = () => { auth.clear(); location.reload(); };
}

// ---- words for codes -----------------------------------------------------------------------------------------
const REFUSAL_KO = {
  no_topic: "질문과 관련된 내용을 색인된 법령·약관에서 찾지 못했습니다.",
  no_sources: "질문에 맞는 조문이 하나도 검색되지 않았습니다.",
  low_confidence: "찾은 조문이 질문과 충분히 맞지 않아 답하지 않았습니다.",
  retries_exhausted: "질문을 바꾸어 여러 번 다시 찾아보았지만 충분히 맞는 조문을 찾지 못했습니다.",
  no_rewrite: "질문을 다른 말로 바꾸어 다시 찾을 방법이 없어 답하지 않았습니다.",
  no_progress: "질문을 바꾸어 보았지만 같은 검색이 되풀이되어 멈췄습니다.",
  rewrite_error: "질문을 바꾸어 다시 찾는 중 오류가 나서 답하지 않았습니다.",
  untrusted_instruction: "근거 문서나 질문에 지시문처럼 보이는 글이 있어 안전을 위해 답하지 않았습니다.",
  deadline: "정해진 시간 안에 답을 마치지 못했습니다. 잠시 후 다시 물어보세요.",
  empty_index: "아직 색인된 문서가 없습니다. 관리자에게 색인을 요청하세요.",
  law_not_indexed: "질문이 가리키는 법령이 색인에 없습니다.",
  generator_not_found: "찾은 조문에서 질문에 대한 답을 찾지 못했습니다.",
  not_grounded: "답변이 근거 조문으로 뒷받침되지 않아 내보내지 않았습니다.",
  unanswerable: "근거가 모자라 이 질문에는 답할 수 없습니다.",
  insufficient_unanswerable: "질문에 답하는 데 필요한 근거가 색인된 문서에 없습니다.",
  insufficient_ambiguous: "질문이 여러 뜻으로 읽혀, 어느 것을 묻는지 정해야 답할 수 있습니다.",
  insufficient_contradictory: "근거 조문끼리 서로 맞지 않아 답하지 않았습니다.",
  vocabulary_gap: "질문의 말과 법령의 용어가 달라 충분히 가까운 조문을 찾지 못했습니다.",
  UNANSWERABLE: "근거가 모자라 이 질문에는 답할 수 없습니다.",
};
const VERDICT_KO = {SUFFICIENT: "충분", PARTIAL: "일부만 뒷받침", IRRELEVANT: "관련 없음", CONTRADICTORY: "근거끼리 충돌",
                    STALE: "시행일이 맞지 않음", AMBIGUOUS: "질문이 모호함", UNAUTHORIZED: "볼 수 없는 문서", UNANSWERABLE: "답할 수 없음"};
const STATUS_KO = {SUPPORTED: "충족", PARTIAL: "일부 충족", MISSING: "누락", CONTRADICTED: "반대 근거", STALE: "시행일 불일치", UNAUTHORIZED: "권한 없음"};
const RISK_KO = {pass: "통과", warn: "주의", soft_fail: "위험", high: "위험 높음", hard_fail: "실패", fail: "실패"};
const TYPE_KO = {structured_lookup: "조문 찾기", interpretation: "해석", procedure: "절차", comparison: "비교", simple_fact: "사실 확인"};
const STRATEGY_KO = {bm25_heavy: "키워드 중심", dense_heavy: "의미 중심", hybrid: "키워드+의미 혼합"};
const DECISION_KO = {pass: "통과", retry: "재검색", rewrite: "재검색", refuse: "거절", abort: "거절"};
const GATE_SOURCE_KO = {settings: "설정값", defaults: "기본값", labels: "정답 라벨로 보정", probes: "탐침 질문으로 보정"};
const GATE_REASON_KO = {pass: "통과", vocabulary_gap: "용어 차이", no_topic: "관련 주제 없음", no_sources: "검색 결과 없음",
                        law_not_indexed: "색인에 없는 법령", low_confidence: "점수 부족"};
const FAILURE_KO = {"문서 없음": "근거 문서에 이 질문의 답이 없습니다.", "미확인": "답을 근거 조문으로 확인하지 못했습니다.",
                    "불일치": "답이 질문이 묻는 것과 맞지 않습니다."};

function refusalText(res) {
  const ex = res.explain || {};
  if (ex.refusal && ex.refusal.message) return ex.refusal.message;
  const code = res.refusal_reason || (ex.refusal && ex.refusal.code);
  if (code && REFUSAL_KO[code]) return REFUSAL_KO[code];
  const v = res.sufficiency && res.sufficiency.verdict;
  if (v && REFUSAL_KO[v]) return REFUSAL_KO[v];
  return "근거가 될 조문을 찾지 못해 답하지 않았습니다.";
}

function warningText(w) {
  const rules = [
    [/^the answer itself contains instruction-like text \((\w+) risk\)/, m => `답변 자체에 지시문처럼 보이는 글이 있습니다(위험도 ${m[1]}). 근거 조문과 대조하세요.`],
    [/^the answer held images or links its sources do not hold, removed \((.*)\)/, m => `근거에 없는 이미지·링크를 답변에서 지웠습니다(${m[1]}).`],
    [/^the answer contains harmful wording \((.*)\)/, m => `답변에 해로운 표현이 있습니다(${m[1]}).`],
    [/^the answer cites no source/, () => "답변이 출처를 인용하지 않습니다."],
    [/^the answer contains personal data \((.*?)\)(, masked)?/, m => `답변에 개인정보가 있습니다(${m[1]})${m[2] ? ". 가려서 보여 줍니다" : ""}.`],
  ];
  for (const [re, f] of rules) { const m = re.exec(w); if (m) return f(m); }
  return w;
}

// ---- the article a source is, in words ------------------------------------------------------------------------
function articleName(src) {
  const m = src.metadata || {};
  let s = m.doc_title ? `「${m.doc_title}」` : (m.doc_id || "문서");
  if (m.article_id) s += ` ${m.article_id}`;
  if (m.article_title) s += `(${m.article_title})`;
  if (m.paragraph) s += ` ${m.paragraph}`;
  return s;
}

// The text of a source with the highlighted spans as <mark>s. Offsets are code points (Python's), so the text is cut
// as an array of code points: Hangul needs no care, astral characters (rare in law text) do.
function markedText(content, spans) {
  const cps = Array.from(content), n = cps.length;
  const ok = spans.map(s => ({claim: s.claim, start: Math.max(0, s.start | 0), end: Math.min(n, s.end | 0)})).filter(s => s.end > s.start);
  const body = h("p", {class: "body"});
  if (!ok.length) { body.textContent = content; return body; }
  const cuts = [...new Set([0, n, ...ok.flatMap(s => [s.start, s.end])])].sort((a, b) => a - b);
  for (let i = 0; i + 1 < cuts.length; i++) {
    const a = cuts[i], b = cuts[i + 1], text = cps.slice(a, b).join("");
    const cover = ok.filter(s => s.start <= a && s.end >= b);
    if (!cover.length) { body.append(text); continue; }
    const claims = [...new Set(cover.map(s => s.claim + 1))].sort((x, y) => x - y);
    const ends = [...new Set(cover.filter(s => s.end === b).map(s => s.claim + 1))].sort((x, y) => x - y);
    body.append(h("mark", {"data-claims": claims.join(","), title: `주장 ${claims.join(", ")}의 근거`}, text,
                  ends.length ? h("sup", {"aria-label": `주장 ${ends.join(", ")}`, text: ends.join(",")}) : null));
  }
  return body;
}

// ---- the question page -----------------------------------------------------------------------------------------
function askPage() {
  const form = $("#ask"), q = $("#q"), mode = $("#mode"), topK = $("#top_k"), filters = $("#filters"), button = $("#ask-button");
  const statusEl = $("#status"), result = $("#result");
  let busy = false, ready = false, pending = null;

  const status = (msg, isError, isBusy) => {
    statusEl.textContent = msg || "";
    statusEl.classList.toggle("busy", !!isBusy);
    statusEl.classList.toggle("error", !!isError);
    statusEl.hidden = false;
  };

  const paramsOf = () => {
    const p = {q: q.value.trim(), mode: mode.value, top_k: topK.value.trim(), filters: filters.value.trim()};
    return p;
  };
  const shareQuery = p => {
    const u = new URLSearchParams();
    u.set("q", p.q);
    if (p.mode) u.set("mode", p.mode);
    if (p.top_k) u.set("top_k", p.top_k);
    if (p.filters) u.set("filters", p.filters);
    return "?" + u.toString();
  };
  const fill = u => {
    q.value = u.get("q") || "";
    mode.value = ["gate", "sufficiency"].includes(u.get("mode")) ? u.get("mode") : "";
    topK.value = /^\d+$/.test(u.get("top_k") || "") ? u.get("top_k") : "";
    filters.value = u.get("filters") || "";
    if (mode.value || topK.value || filters.value) $("#opts").open = true;
  };

  q.addEventListener("keydown", e => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) { e.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", e => { e.preventDefault(); ask(paramsOf(), true); });
  window.addEventListener("popstate", () => { const u = new URLSearchParams(location.search); fill(u); if (u.get("q")) ask(paramsOf(), false); });

  async function ask(p, push) {
    if (!p.q) { status("질문을 입력하세요.", true); q.focus(); return; }
    let flt = null;
    if (p.filters) {
      try { flt = JSON.parse(p.filters); if (!flt || typeof flt !== "object" || Array.isArray(flt)) throw new Error("not an object"); }
      catch (err) { status('필터는 JSON 객체여야 합니다. 예: {"doc_id": "상법_법률"}', true); $("#opts").open = true; filters.focus(); return; }
    }
    if (!ready) { pending = p; return; }
    if (busy) return;
    const share = shareQuery(p);
    if (push && location.search !== share) history.pushState(null, "", share);
    const body = {query: p.q, answer_mode: p.mode || null, top_k: p.top_k ? parseInt(p.top_k, 10) : null, filters: flt,
                  include_ledger: p.mode === "sufficiency", explain: true};
    busy = true; button.disabled = true; result.setAttribute("aria-busy", "true");
    status("답을 찾는 중입니다…", false, true);
    try {
      for (;;) {
        let r;
        try { r = await api("answer", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)}); }
        catch (err) { status("서버에 연결할 수 없습니다. 잠시 후 다시 물어보세요.", true); return; }
        if (r.status === 401) {
          auth.clear(); status("API 키가 필요합니다.", true);
          await askKey("키가 거절되었습니다(틀렸거나 만료·폐기된 키). 다시 입력하세요.");
          await identify(status);
          status("답을 찾는 중입니다…", false, true);
          continue;
        }
        if (!r.ok) { status(await httpError(r), true); return; }
        const res = await r.json();
        render(res, p, share);
        status(res.is_refusal ? "답하지 않았습니다. 이유를 아래에 적었습니다." : "답을 찾았습니다.");
        return;
      }
    } finally { busy = false; button.disabled = false; result.removeAttribute("aria-busy"); }
  }

  async function httpError(r) {
    let detail = "";
    try { const j = await r.json(); detail = typeof j.detail === "string" ? j.detail : (j.detail || []).map(d => d.msg).join("; "); } catch (e) { /* no JSON */ }
    if (r.status === 403) return "이 키로는 질문할 수 없습니다(권한 부족)." + (detail ? ` (${detail})` : "");
    if (r.status === 422) return "질문이나 설정을 받을 수 없습니다: " + (detail || "형식 오류");
    if (r.status === 413) return "질문이 너무 깁니다.";
    if (r.status === 429 || r.status === 503) {
      const after = r.headers.get("Retry-After");
      return `서버가 바쁩니다. ${after ? after + "초 뒤에 " : "잠시 후 "}다시 물어보세요.`;
    }
    if (r.status === 409) return "색인이 서버 설정과 맞지 않습니다. 관리자에게 알리세요.";
    return `답을 받지 못했습니다 (HTTP ${r.status}).`;
  }

  function render(res, p, share) {
    const ex = res.explain || {};
    const bySource = new Map((res.sources || []).map(s => [s.chunk_id, s]));
    const cites = res.citations || [];
    const cited = [...new Set(cites.flatMap(c => c.supported_by_chunks || []))].filter(id => bySource.has(id));
    const spans = ex.highlights || [];
    const anchor = id => `src-${id}`;

    // the answer (or the refusal), and the link that asks it again
    const link = h("a", {class: "share-link", href: share, text: "이 답변을 다시 여는 링크"});
    const copy = h("button", {type: "button", class: "quiet", text: "링크 복사", onclick: async () => {
      const url = new URL(share, location.href).href;
      try { await navigator.clipboard.writeText(url); copy.textContent = "복사했습니다"; }
      catch (e) { copy.textContent = "복사하지 못했습니다"; }
      setTimeout(() => { copy.textContent = "링크 복사"; }, 2000);
    }});
    const shareRow = h("p", {class: "share"}, link, copy);
    let main;
    if (res.is_refusal) {
      main = h("div", {class: "card refusal", "data-code": res.refusal_reason || (ex.refusal && ex.refusal.code) || ""},
        h("h2", {text: "답하지 않았습니다"}),
        h("p", {class: "question"}, "질문: ", res.query || p.q),
        h("p", {class: "reason", id: "refusal-reason", text: refusalText(res)}),
        h("p", {class: "hint", text: "법령·약관에 나오는 말로 바꾸어 묻거나, 검색 설정의 필터를 넓혀 보세요."}),
        shareRow);
    } else {
      const body = cites.length
        ? h("ol", {class: "claims"}, cites.map((c, i) => h("li", {},
            h("span", {class: "claim-no", "aria-hidden": "true", text: i + 1}),
            h("span", {class: "claim", text: c.claim}),
            h("span", {class: "refs"}, "근거: ", (c.supported_by_chunks || []).filter(id => bySource.has(id)).map(id =>
              h("a", {href: `#${anchor(id)}`, text: articleName(bySource.get(id))})),
              (c.supported_by_chunks || []).some(id => bySource.has(id)) ? null : (c.refs || []).join(", ") || "없음"))))
        : h("p", {class: "text", text: res.answer});
      main = h("div", {class: "card answer" + (res.failure_reason ? " unconfirmed" : "")},
        h("h2", {text: "답변"}),
        h("p", {class: "question"}, "질문: ", res.query || p.q),
        res.failure_reason ? h("p", {class: "badge risk-warn", text: `${res.failure_reason}: ${FAILURE_KO[res.failure_reason] || ""}`}) : null,
        h("div", {id: "answer-text", class: "answer-text"}, body),
        shareRow);
    }
    $("#answer-box").replaceChildren(main);

    // the articles: the cited ones with their supporting spans, then the rest of what was found
    const srcCard = s => h("article", {class: "src", id: anchor(s.chunk_id), "data-chunk": s.chunk_id},
      h("h3", {class: "src-title", text: articleName(s)}),
      h("p", {class: "meta", text: [s.metadata && s.metadata.chapter, s.metadata && s.metadata.effective_date && `시행 ${s.metadata.effective_date}`,
                                    typeof s.rerank_score === "number" ? `관련도 ${num(s.rerank_score)}` : (s.metadata && s.metadata.sibling_of ? "이웃 조항" : null)]
                                   .filter(Boolean).join(" · ")}),
      markedText(s.content || "", spans.filter(x => x.chunk_id === s.chunk_id)));
    const rest = (res.sources || []).filter(s => !cited.includes(s.chunk_id));
    const srcBox = [];
    if (cited.length) srcBox.push(h("section", {class: "card sources", "aria-labelledby": "cited-title"},
      h("h2", {id: "cited-title", text: `인용한 조문 ${cited.length}개`}),
      h("p", {class: "hint", text: "노란 표시가 답변의 각 주장을 뒷받침하는 부분입니다(윗첨자는 주장 번호)."}),
      cited.map(id => srcCard(bySource.get(id))),
      rest.length ? h("details", {class: "more"}, h("summary", {text: `검색되었지만 인용하지 않은 조문 ${rest.length}개`}), rest.map(srcCard)) : null));
    else if (rest.length) srcBox.push(h("section", {class: "card sources", "aria-labelledby": "cited-title"},
      h("h2", {id: "cited-title", text: "검색된 조문"}),
      h("details", {class: "more"}, h("summary", {text: `답변에 쓰지 않은 조문 ${rest.length}개 보기`}), rest.map(srcCard))));
    $("#sources-box").replaceChildren(...srcBox);

    $("#why-box").replaceChildren(...[routeCard(res), gateCard(res), verifyCard(res), res.sufficiency ? sufficiencyCard(res) : null].filter(Boolean));
    result.hidden = false;
  }

  fill(new URLSearchParams(location.search));
  return {
    status,
    go(w) {
      if (!w) return;
      ready = true;
      const p = pending || (new URLSearchParams(location.search).get("q") ? paramsOf() : null);
      pending = null;
      if (p) ask(p, false); else if (!document.activeElement || document.activeElement === document.body) q.focus();
    },
  };
}

function routeCard(res) {
  const r = res.route || {};
  return h("section", {class: "card route", "aria-labelledby": "route-title"},
    h("h2", {id: "route-title", text: "질문 경로"}),
    h("dl", {class: "kv"},
      h("dt", {text: "질문 유형"}), h("dd", {id: "query-type"}, TYPE_KO[r.query_type] || r.query_type || "—", " ", h("code", {text: r.query_type || ""})),
      h("dt", {text: "검색 방식"}), h("dd", {id: "strategy"}, STRATEGY_KO[r.strategy] || r.strategy || "—", " ", h("code", {text: r.strategy || ""})),
      r.other_laws && r.other_laws.length ? [h("dt", {text: "색인에 없는 법령"}), h("dd", {text: r.other_laws.join(", ")})] : null,
      res.sufficiency ? [h("dt", {text: "판단 방식"}), h("dd", {text: "근거 충분성"})] : null,
      typeof res.elapsed_ms === "number" ? [h("dt", {text: "처리 시간"}), h("dd", {text: `${res.elapsed_ms.toLocaleString("ko-KR")} ms`})] : null));
}

function gateCard(res) {
  const ex = res.explain || {}, g = ex.gate || {};
  const scores = (res.sources || []).map(s => s.rerank_score).filter(x => typeof x === "number");
  const best = typeof g.best_score === "number" ? g.best_score : (ex.gate ? null : (scores.length ? Math.max(...scores) : null));
  const passT = typeof g.pass_threshold === "number" ? g.pass_threshold : null;
  const refuseT = typeof g.refuse_threshold === "number" ? g.refuse_threshold : null;
  const clamp = x => Math.min(1, Math.max(0, x));
  const at = x => `${(clamp(x) * 100).toFixed(2)}%`;
  const bar = h("div", {class: "gatebar", id: "gate-bar", role: "img",
    "aria-label": `게이트 점수 막대: 최고 점수 ${num(best)}, 거절 기준 ${num(refuseT)}, 통과 기준 ${num(passT)}`});
  if (refuseT !== null && passT !== null) {
    bar.append(h("span", {class: "zone z-refuse", style: `left:0;width:${at(refuseT)}`}),
               h("span", {class: "zone z-retry", style: `left:${at(refuseT)};width:${(clamp(passT) - clamp(refuseT)) * 100}%`}),
               h("span", {class: "zone z-pass", style: `left:${at(passT)};right:0`}));
  }
  // a label sits under (or over) its line, shifted by the line's own fraction: it never leaves the bar's ends
  const lbl = (x, text) => h("span", {class: "lbl", style: `transform:translateX(-${(clamp(x) * 100).toFixed(1)}%)`, text});
  if (refuseT !== null) bar.append(h("span", {class: "mark m-refuse", id: "gate-refuse", "data-value": refuseT, style: `left:${at(refuseT)}`}, lbl(refuseT, `거절선 ${num(refuseT)}`)));
  if (passT !== null) bar.append(h("span", {class: "mark m-pass", id: "gate-pass", "data-value": passT, style: `left:${at(passT)}`}, lbl(passT, `통과선 ${num(passT)}`)));
  if (best !== null) bar.append(h("span", {class: "best", id: "gate-best", "data-value": best, style: `left:${at(best)}`}, lbl(best, `최고 점수 ${num(best)}`)));
  const decision = g.decision ? (DECISION_KO[g.decision] || VERDICT_KO[g.decision] || g.decision) : (res.is_refusal ? "거절" : "통과");
  let said;
  if (best === null) said = "검색된 조문이 없어 점수가 없습니다.";
  else if (passT !== null && best >= passT) said = `최고 점수 ${num(best)}가 통과 기준 ${num(passT)} 이상입니다.`;
  else if (refuseT !== null && best < refuseT) said = `최고 점수 ${num(best)}가 거절 기준 ${num(refuseT)}보다 낮습니다.`;
  else if (passT !== null) said = `최고 점수 ${num(best)}가 통과 기준 ${num(passT)}에 못 미칩니다.`;
  else said = `최고 점수 ${num(best)}.`;
  const attempts = ex.attempts || [];
  const retries = res.crag_retries || Math.max(0, attempts.length - 1);
  return h("section", {class: "card gate", "aria-labelledby": "gate-title"},
    h("h2", {id: "gate-title", text: "CRAG 게이트"}),
    bar,
    h("ul", {class: "legend", "aria-hidden": "true"},
      h("li", {}, h("i", {style: "background:var(--refuse-zone)"}), "거절"), h("li", {}, h("i", {style: "background:var(--retry-zone)"}), "재검색"),
      h("li", {}, h("i", {style: "background:var(--pass-zone)"}), "통과")),
    h("p", {id: "gate-said"}, h("strong", {text: `판정: ${decision}`}), ". ", said,
      g.source ? h("span", {class: "hint", text: ` (기준선: ${GATE_SOURCE_KO[g.source] || g.source})`}) : null),
    h("p", {id: "retries", text: retries ? `질문을 ${retries}번 바꾸어 다시 찾았습니다.` : "질문을 바꾸지 않고 한 번에 찾았습니다."}),
    attempts.length ? h("ol", {class: "attempts", id: "attempts", "aria-label": "검색 시도"}, attempts.map((a, i) => h("li", {},
      i === 0 ? "원래 질문 " : "바꾼 질문 ", h("q", {text: a.query}), ` — 최고 ${num(a.best_score)} · ${DECISION_KO[a.decision] || a.decision || ""}`,
      a.reason && a.reason !== "pass" ? ` (${GATE_REASON_KO[a.reason] || REFUSAL_KO[a.reason] || a.reason})` : ""))) : null,
    ex.gate ? null : h("p", {class: "hint", text: "서버가 게이트 설명(explain)을 보내지 않아 기준선은 그리지 못했습니다."}));
}

function verifyCard(res) {
  const v = res.verification;
  const checks = res.checks || {};
  const level = v ? v.risk_level : (res.is_refusal ? null : (checks.risk_level || "pass"));
  return h("section", {class: "card verify", "aria-labelledby": "verify-title"},
    h("h2", {id: "verify-title", text: "검증"}),
    level ? h("p", {}, "위험도 ", h("span", {class: `badge risk-${level}`, id: "risk", "data-level": level, text: RISK_KO[level] || level}),
              v && typeof v.groundedness === "number" ? ` · 근거 일치 ${pct(v.groundedness)}` : "")
          : h("p", {id: "risk", text: "답변이 없어 검증하지 않았습니다."}),
    v && v.warnings && v.warnings.length ? h("ul", {class: "warnings", id: "warnings"}, v.warnings.map(w => h("li", {title: w, text: warningText(w)})))
      : (level ? h("p", {class: "hint", text: "답변의 조문 번호와 수치가 모두 근거 조문에서 확인되었습니다."}) : null),
    v && v.escalation_required ? h("p", {class: "missing-note", text: "사람의 검토가 필요합니다."}) : null);
}

function sufficiencyCard(res) {
  const s = res.sufficiency, reqs = s.requirements || [], missing = s.missing || [];
  const cov = typeof s.coverage === "number" ? s.coverage : null;
  return h("section", {class: "card sufficiency", "aria-labelledby": "suff-title"},
    h("h2", {id: "suff-title", text: "근거 충분성"}),
    h("p", {}, "판정 ", h("span", {class: `badge v-${s.verdict}`, id: "verdict", "data-verdict": s.verdict, text: VERDICT_KO[s.verdict] || s.verdict}),
      cov !== null ? ` · 충족률 ${pct(cov)}` : ""),
    cov !== null ? h("span", {class: "meter", role: "meter", "aria-valuemin": 0, "aria-valuemax": 1, "aria-valuenow": cov, "aria-label": `충족률 ${pct(cov)}`},
                     h("span", {style: `width:${cov * 100}%`})) : null,
    reqs.length ? h("table", {class: "ledger", id: "ledger"},
      h("caption", {class: "visually-hidden", text: "요건 장부"}),
      h("thead", {}, h("tr", {}, h("th", {scope: "col", text: "요건"}), h("th", {scope: "col", text: "내용"}), h("th", {scope: "col", text: "상태"}))),
      h("tbody", {}, reqs.map(r => h("tr", {"data-status": r.status},
        h("td", {text: r.id + (r.required === false ? " (선택)" : "")}), h("td", {text: r.description}),
        h("td", {}, h("span", {class: `badge ${r.status === "SUPPORTED" ? "st-ok" : (r.status === "PARTIAL" ? "v-PARTIAL" : "st-missing")}`,
                              text: STATUS_KO[r.status] || r.status})))))) : null,
    missing.length ? h("p", {class: "missing-note", id: "missing"}, "빠진 요건: ", missing.map(m => typeof m === "string" ? m : `${m.id} ${m.description || ""}`.trim()).join(", "))
      : h("p", {class: "hint", text: "빠진 요건이 없습니다."}),
    h("p", {class: "hint", text: `검색 ${s.searches ?? "—"}번 · 추가 라운드 ${s.rounds ?? 0}번`}));
}

// ---- start ----------------------------------------------------------------------------------------------------
window.Cragrag = {h, $, api, auth, askKey, identify, showWho, num, pct, REFUSAL_KO, RISK_KO};

if (document.body.dataset.page === "ask") {
  const page = askPage();                // the form works at once; a question asked before whoami answers waits for it
  identify(page.status).then(page.go);
}
})();
