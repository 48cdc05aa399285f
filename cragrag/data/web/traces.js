/* cragrag's trace viewer: refusal reasons, retries, risk levels and latency over recent answers, as small inline SVG
   charts drawn here (no chart library). Needs an admin key when the server has keys; page.js handles the key. */
(() => {
"use strict";
const {h, $, api, auth, askKey, identify, showWho} = window.Cragrag;
const NS = "http://www.w3.org/2000/svg";
const REASON_KO = {no_topic: "관련 주제 없음", no_sources: "검색 결과 없음", low_confidence: "점수 부족", retries_exhausted: "재검색 소진",
                   no_rewrite: "바꿀 질문 없음", no_progress: "재검색 반복", rewrite_error: "재작성 오류", untrusted_instruction: "지시문 의심",
                   deadline: "시간 초과", empty_index: "빈 색인", law_not_indexed: "색인에 없는 법령", generator_not_found: "조문에 답 없음",
                   not_grounded: "근거 불충분", unanswerable: "답할 수 없음", UNANSWERABLE: "답할 수 없음", unknown: "알 수 없음"};
const RISK_KO = {pass: "통과", warn: "주의", soft_fail: "위험", high: "위험 높음", hard_fail: "실패", fail: "실패", none: "검증 없음", null: "검증 없음"};
const RISK_ORDER = ["pass", "warn", "soft_fail", "high", "hard_fail", "fail"];

function s(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
const fmt = x => Math.round(x).toLocaleString("ko-KR");

// A card with a title, the chart, a one-line summary for screen readers (the SVG's label) and the numbers as a table.
function card(id, title, summary, svg, rows, headers) {
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", summary);
  return h("section", {class: "card chart", id, "aria-labelledby": `${id}-title`},
    h("h2", {id: `${id}-title`, text: title}),
    svg,
    h("p", {class: "hint", text: summary}),
    rows.length ? h("details", {}, h("summary", {text: "숫자로 보기"}),
      h("table", {}, h("thead", {}, h("tr", {}, headers.map(t => h("th", {scope: "col", text: t})))),
        h("tbody", {}, rows.map(r => h("tr", {}, r.map(c => h("td", {text: c}))))))) : null);
}

// Horizontal bars: one row per (label, value), the value written after the bar.
function hbars(width, items, klass) {
  const rowH = 26, labelW = Math.min(130, Math.round(width * 0.36)), valueW = 46, top = 4;
  const max = Math.max(1, ...items.map(i => i.value));
  const barW = Math.max(20, width - labelW - valueW - 8);
  const svg = s("svg", {width, height: top * 2 + rowH * Math.max(1, items.length), viewBox: `0 0 ${width} ${top * 2 + rowH * Math.max(1, items.length)}`});
  if (!items.length) svg.append(s("text", {x: 0, y: 18, class: "muted"}, "기록 없음"));
  items.forEach((it, i) => {
    const y = top + i * rowH, w = Math.max(it.value ? 2 : 0, (it.value / max) * barW);
    svg.append(s("text", {x: labelW - 8, y: y + 17, "text-anchor": "end"}, it.label),
               s("rect", {x: labelW, y: y + 4, width: w.toFixed(1), height: rowH - 8, rx: 3, class: klass ? klass(it) : "bar"}, s("title", {}, `${it.label}: ${it.value}`)),
               s("text", {x: labelW + w + 6, y: y + 17, class: "muted"}, fmt(it.value)));
  });
  return svg;
}

// Vertical bars (a histogram of retries).
function vbars(width, items) {
  const H = 150, left = 34, bottom = 24, top = 16;
  const max = Math.max(1, ...items.map(i => i.value)), n = Math.max(1, items.length);
  const slot = (width - left - 4) / n, bw = Math.min(56, slot * 0.7);
  const y = v => top + (H - top - bottom) * (1 - v / max);
  const svg = s("svg", {width, height: H, viewBox: `0 0 ${width} ${H}`},
    s("line", {x1: left, x2: width - 4, y1: H - bottom, y2: H - bottom, class: "axis"}),
    s("text", {x: left - 6, y: y(max) + 4, "text-anchor": "end", class: "muted"}, fmt(max)),
    s("text", {x: left - 6, y: H - bottom + 4, "text-anchor": "end", class: "muted"}, "0"));
  items.forEach((it, i) => {
    const cx = left + slot * (i + 0.5);
    svg.append(s("rect", {x: (cx - bw / 2).toFixed(1), y: y(it.value).toFixed(1), width: bw.toFixed(1), height: (H - bottom - y(it.value)).toFixed(1), rx: 3, class: "bar"},
                 s("title", {}, `${it.label}: ${it.value}`)),
               s("text", {x: cx, y: y(it.value) - 4, "text-anchor": "middle", class: "muted"}, fmt(it.value)),
               s("text", {x: cx, y: H - 6, "text-anchor": "middle"}, it.label));
  });
  return svg;
}

// Latency of each answer in order, with the p50 and p95 lines.
function latency(width, series, p50, p95) {
  const H = 170, left = 70, right = 8, top = 12, bottom = 22;
  const max = Math.max(1, p95 || 0, ...series) * 1.05;
  const x = i => left + (series.length > 1 ? (width - left - right) * i / (series.length - 1) : (width - left - right) / 2);
  const y = v => top + (H - top - bottom) * (1 - v / max);
  const svg = s("svg", {width, height: H, viewBox: `0 0 ${width} ${H}`},
    s("line", {x1: left, x2: width - right, y1: H - bottom, y2: H - bottom, class: "axis"}),
    s("line", {x1: left, x2: left, y1: top, y2: H - bottom, class: "axis"}),
    s("text", {x: left - 6, y: y(0) + 4, "text-anchor": "end", class: "muted"}, "0 ms"),
    s("text", {x: left - 6, y: top + 8, "text-anchor": "end", class: "muted"}, `${fmt(max)} ms`),
    s("text", {x: left, y: H - 5, class: "muted"}, "오래된 답변"),
    s("text", {x: width - right, y: H - 5, "text-anchor": "end", class: "muted"}, "최근 답변 →"));
  if (series.length) svg.append(s("polyline", {class: "line", points: series.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}));
  for (const [v, k, name] of [[p50, "p50", "p50"], [p95, "p95", "p95"]]) {
    if (typeof v !== "number") continue;
    svg.append(s("line", {x1: left, x2: width - right, y1: y(v), y2: y(v), class: `axis ${k}`}),
               s("text", {x: width - right - 2, y: y(v) - 4, "text-anchor": "end", class: "muted"}, `${name} ${fmt(v)} ms`));
  }
  return svg;
}

const status = (msg, isError) => { const e = $("#status"); e.textContent = msg || ""; e.classList.toggle("error", !!isError); };
let last = null;

function draw(d) {
  last = d;
  const box = $("#charts");
  const width = Math.max(240, Math.min(720, (box.clientWidth || 600) > 860 ? (box.clientWidth - 14) / 2 - 34 : box.clientWidth - 34));
  const total = d.count || 0;
  const refusals = Object.entries(d.refusals || {}).filter(([k]) => k !== "answered")   // ("answered": the answers that were not refusals)
                          .sort((a, b) => b[1] - a[1]).map(([k, v]) => ({label: REASON_KO[k] || k, value: v, code: k}));
  const nRef = refusals.reduce((a, b) => a + b.value, 0);
  const retries = Object.entries(d.retries || {}).sort((a, b) => (+a[0]) - (+b[0])).map(([k, v]) => ({label: `${k}번`, value: v}));
  const risks = Object.entries(d.risk_levels || {}).sort((a, b) => (RISK_ORDER.indexOf(a[0]) + 99) % 99 - (RISK_ORDER.indexOf(b[0]) + 99) % 99)
                      .map(([k, v]) => ({label: RISK_KO[k] || k, value: v, code: k}));
  const lat = d.latency_ms || {}, series = (lat.series || []).filter(v => typeof v === "number");
  const retried = retries.filter(r => r.label !== "0번").reduce((a, b) => a + b.value, 0);
  $("#count").textContent = `최근 답변 ${fmt(total)}개 · 거절 ${fmt(nRef)}개${total ? ` (${Math.round(nRef / total * 100)}%)` : ""}`;
  box.replaceChildren(
    card("c-refusals", "거절 이유", refusals.length ? `거절 ${nRef}개: ` + refusals.map(r => `${r.label} ${r.value}`).join(", ") : "거절된 답변이 없습니다.",
         hbars(width, refusals, () => "bar r-hard_fail"), refusals.map(r => [r.label, r.code, String(r.value)]), ["이유", "코드", "개수"]),
    card("c-retries", "질문 바꿔 다시 찾기(CRAG 재시도)", retries.length ? `재시도한 답변 ${retried}개: ` + retries.map(r => `${r.label} ${r.value}개`).join(", ") : "기록 없음",
         vbars(width, retries), retries.map(r => [r.label, String(r.value)]), ["재시도", "답변 수"]),
    card("c-risk", "검증 위험도", risks.length ? risks.map(r => `${r.label} ${r.value}`).join(", ") : "기록 없음",
         hbars(width, risks, it => `r-${RISK_KO[it.code] ? it.code : "none"}`), risks.map(r => [r.label, r.code, String(r.value)]), ["위험도", "코드", "개수"]),
    card("c-latency", "응답 시간", series.length ? `답변 ${series.length}개의 응답 시간: 중앙값(p50) ${fmt(lat.p50 || 0)} ms, p95 ${fmt(lat.p95 || 0)} ms` : "기록 없음",
         latency(width, series, lat.p50, lat.p95), [["p50", `${fmt(lat.p50 || 0)} ms`], ["p95", `${fmt(lat.p95 || 0)} ms`], ["최대", `${fmt(Math.max(0, ...series))} ms`]], ["", "값"]));
}

async function load() {
  const n = $("#n").value;
  status("불러오는 중…");
  for (;;) {
    let r;
    try { r = await api(`traces/summary?n=${encodeURIComponent(n)}`); }
    catch (e) { status("서버에 연결할 수 없습니다.", true); return; }
    if (r.status === 401 || r.status === 403) {
      const refused = r.status === 403 ? "이 키는 관리자 키가 아닙니다. 관리자 키를 입력하세요." : (auth.key() ? "키가 거절되었습니다. 다시 입력하세요." : null);
      auth.clear();
      status("관리자 키가 필요합니다.", true);
      await askKey(refused, "관리자 키");
      const w = await identify(status);
      if (!w) return;
      continue;
    }
    if (r.status === 404) { status("이 서버는 답변 기록을 남기지 않습니다(trace가 꺼져 있음).", true); return; }
    if (!r.ok) { status(`기록을 받지 못했습니다 (HTTP ${r.status}).`, true); return; }
    draw(await r.json());
    status("");
    return;
  }
}

let resize = null;
window.addEventListener("resize", () => { clearTimeout(resize); resize = setTimeout(() => last && draw(last), 150); });
$("#range").addEventListener("submit", e => { e.preventDefault(); load(); });
$("#n").addEventListener("change", load);
identify(status).then(w => { if (!w) return; if (w.keys && w.role !== "admin") { auth.clear(); askKey("이 키는 관리자 키가 아닙니다. 관리자 키를 입력하세요.", "관리자 키").then(() => identify(status)).then(x => x && load()); } else load(); });
void showWho;
})();
