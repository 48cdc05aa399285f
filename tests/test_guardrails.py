"""Output guardrails: identifiers inserted into real statute sentences are masked (and never read as numbers by the
verifier) while the statute text around them is untouched; harmful terms never fire on the bundled corpus; the
citation notice is appended once."""
import re
from datetime import date, timedelta
from functools import lru_cache
from hypothesis import given, settings, strategies as st
from cragrag.indexing.documents import chunk_document, load_demo_corpus
from cragrag.check.guardrails import (NO_CITATION_NOTICE, HarmfulContentFilter, apply_guardrails, default_harmful_filter,
                                has_source_citation)
from cragrag.text.korean import split_units
from cragrag.text.pii import PII_TAGS, find_pii, luhn_ok, mask_pii, rrn_check_digit
from cragrag.text.numbers import extract_numeric_facts

@lru_cache(maxsize=1)
def chunks():
    return [c for d in load_demo_corpus() for c in chunk_document(d)]

@lru_cache(maxsize=1)
def sentences():
    "Statute sentences of the bundled corpus with a number in them and a place to insert something."
    out = [u for c in chunks() for u in split_units(c.text) if re.search(r"\d", u) and _slots(u)]
    return sorted(set(out))[:3000]

def _slots(s: str) -> list[int]:
    "Spaces with no digit on either side: inserting there cannot join or split a number."
    return [i for i, ch in enumerate(s) if ch == " " and 0 < i < len(s) - 1 and not s[i - 1].isdigit() and not s[i + 1].isdigit()]

def _rrn(draw, foreign: bool) -> str:
    born = date(1940, 1, 1) + timedelta(days=draw(st.integers(0, 365 * 59)))
    g = draw(st.sampled_from("5678" if foreign else "1234")) if born.year < 2000 else draw(st.sampled_from("78" if foreign else "34"))
    first12 = born.strftime("%y%m%d") + g + "".join(str(draw(st.integers(0, 9))) for _ in range(5))
    d = first12 + rrn_check_digit(first12, foreign)
    return f"{d[:6]}-{d[6:]}"

def _card(draw) -> str:
    body = "4" + "".join(str(draw(st.integers(0, 9))) for _ in range(14))
    d = next(body + str(k) for k in range(10) if luhn_ok(body + str(k)))
    return "-".join(d[i:i + 4] for i in range(0, 16, 4))

@st.composite
def identifier(draw):
    "(prefix label, identifier, its PII kind)."
    n = lambda k: "".join(str(draw(st.integers(0, 9))) for _ in range(k))
    kind = draw(st.sampled_from(["phone", "area", "resident_id", "foreigner_id", "card", "account", "email", "passport"]))
    if kind == "phone": return "", f"010-{n(4)}-{n(4)}", "phone"
    if kind == "area": return "", f"{draw(st.sampled_from(['02', '031', '051', '064', '070']))}-{draw(st.integers(200, 999))}-{n(4)}", "phone"
    if kind in ("resident_id", "foreigner_id"): return "", _rrn(draw, kind == "foreigner_id"), kind
    if kind == "card": return "", _card(draw), "card"
    if kind == "account": return "계좌 ", f"{draw(st.integers(100, 999))}-{n(3)}-{n(6)}", "account"
    if kind == "email": return "", f"user{n(3)}@example.co.kr", "email"
    return "여권번호 ", f"M{n(8)}", "passport"

def kv(text): return [(f.kind, f.value) for f in extract_numeric_facts(text)]

@settings(max_examples=300, deadline=None)
@given(st.data(), identifier())
def test_identifiers_in_statute_sentences_are_masked_and_never_numbers(data, ident):
    s = data.draw(st.sampled_from(sentences()))
    i = data.draw(st.sampled_from(_slots(s)))
    label, ident_text, kind = ident
    t = s[:i] + " " + label + ident_text + s[i:]
    assert mask_pii(t) == s[:i] + " " + label + PII_TAGS[kind] + s[i:]       # only the identifier is masked
    assert [m.kind for m in find_pii(t)] == [kind]
    assert kv(t) == kv(s)                                                     # the verifier reads the same facts
    g = apply_guardrails(t, require_citation=False)
    assert g.answer == mask_pii(t) and g.checks.masked == [kind] and not g.checks.no_pii and g.checks.no_harmful_content

def test_statute_text_is_never_masked_or_flagged():
    hf = default_harmful_filter()
    assert [c.chunk_id for c in chunks() if find_pii(c.text) or hf(c.text)] == []
    for s in sentences()[:500]:
        assert apply_guardrails(s, require_citation=False).answer == s

def test_reported_phone_case_and_neighbours():
    assert kv("상담 010-1234-5678, 주 3회 방문") == [("count", ("회", 3))]
    assert kv("보험금 1,000만원을 010-1234-5678로 문의 후 3년 이내 청구") == [("money", 1e7), ("period", ("month", 36.0))]
    assert kv("콜센터 1588-1234, 주 5일 운영") == [("period", ("day", 5.0))]
    assert kv("접수번호 2024-00123 건으로 처리, 10일 내 안내") == [("period", ("day", 10.0))]
    assert kv("「상법」 제650조의2, 별표 14, 2024.12.31., 30일, 100분의 5") == [("date", "2024-12-31"), ("period", ("day", 30.0)), ("percent", 5.0)]

def test_citation_notice_is_appended_once():
    g = apply_guardrails("보험료를 3개월 넘게 안 내면 해지될 수 있어요.")
    assert g.answer.endswith(NO_CITATION_NOTICE) and g.checks.notices == [NO_CITATION_NOTICE] and not g.checks.has_source_citation
    assert apply_guardrails(g.answer).answer == g.answer
    assert has_source_citation("「상법」 제651조") and has_source_citation("(근거: 보험업법)") and not has_source_citation("참고로 1개월입니다.")

def test_harmful_filter_from_file_and_classifier(tmp_path):
    p = tmp_path / "terms.txt"
    p.write_text("# 주석\n사기꾼\n\nre:죽여\\s*버리\n", encoding="utf-8")
    f = HarmfulContentFilter.from_file(p, classifier=lambda s: 0.7, threshold=0.6)
    assert f.terms == ["사기꾼", r"re:죽여\s*버리"]
    assert f("그 사기꾼을 죽여 버리겠다") == ["사기꾼", r"re:죽여\s*버리", "classifier:0.70"]
    assert HarmfulContentFilter(["병신"])("분할합병신설회사") == []
    r = apply_guardrails("이 병신아 「상법」 제651조", harmful=HarmfulContentFilter(["병신"]))
    assert not r.checks.no_harmful_content and r.checks.harmful_terms == ["병신"] and r.answer == "이 [부적절한 표현 삭제]아 「상법」 제651조" and r.checks.withheld
