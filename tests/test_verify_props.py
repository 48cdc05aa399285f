"""Property tests of the Self-RAG verifier: extraction is total and well-formed on arbitrary text, normalisation is
idempotent, equivalent renderings of one amount compare equal, and the verdict is a pure function of (answer, context)
that follows the risk-level policy."""
import random, re
from hypothesis import given, settings, strategies as st
from cragrag.core.schema import RiskLevel
from cragrag.text.korean import ARTICLE_ID, extract_appendix_refs, extract_article_refs
from cragrag.check.verify import decompose_claims, verify_answer
from cragrag.text.numbers import KIND_KO, extract_numeric_facts, render_fact

KOREAN = st.text(alphabet=st.sampled_from(list("제조항호의목별표부칙서식지원만억천백십일주개월년세회%퍼센트분/.,-~ 0123456789①②③「」[]()가나다보험금다요.\n|")), max_size=200)

@settings(max_examples=400, deadline=None)
@given(KOREAN)
def test_extractors_are_total_and_well_formed(text):
    "Any text gives canonical article ids, known appendix and fact kinds, and claims that are pieces of its lines."
    assert all(re.fullmatch(ARTICLE_ID, r.article) for r in extract_article_refs(text))
    assert all(a.kind in ("별표", "부칙", "서식") for a in extract_appendix_refs(text))
    facts = extract_numeric_facts(text)
    assert all(f.kind in KIND_KO for f in facts) and facts == extract_numeric_facts(text)
    claims = decompose_claims(text)
    assert all(c.text and c.text == c.text.strip() and "\n" not in c.text and c.text in text for c in claims), claims
    assert all(c.verifiable == bool(c.article_refs or c.appendix_refs or c.numeric_facts) for c in claims)

@settings(max_examples=400, deadline=None)
@given(KOREAN, st.lists(KOREAN, max_size=3))
def test_verdict_follows_the_risk_policy(answer, chunks):
    "hard_fail exactly when a cited ref is missing; pass exactly when nothing is warned; groundedness 1.0 exactly on a pass with facts."
    v = verify_answer(answer, chunks)
    assert v.risk_level in RiskLevel and v.record() == verify_answer(answer, list(chunks)).record()
    assert (v.risk_level == RiskLevel.HARD_FAIL) == bool(v.missing_refs)
    assert (v.risk_level == RiskLevel.PASS) == (not v.warnings) == (v.projection() is None)
    assert (v.groundedness is None) == (not any(c.verifiable for c in v.claims))
    assert v.groundedness is None or 0 <= v.groundedness <= 1
    assert (v.groundedness == 1.0) == (v.risk_level == RiskLevel.PASS and v.groundedness is not None)
    assert all(c.supported_by_chunks and set(c.supported_by_chunks) <= {str(i) for i in range(len(chunks))} for c in v.citations)

@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.lists(st.text(max_size=200), max_size=4))
def test_verify_never_raises_and_is_deterministic(answer, chunks):
    a, b = verify_answer(answer, chunks), verify_answer(answer, list(chunks))
    assert a.record() == b.record()
    assert a.risk_level in RiskLevel and (a.groundedness is None or 0 <= a.groundedness <= 1)

@settings(max_examples=300, deadline=None)
@given(KOREAN)
def test_normalisation_is_idempotent(text):
    "Rendering a fact canonically and extracting it again gives the same fact, and rendering that gives the same text."
    for f in extract_numeric_facts(text):
        again = extract_numeric_facts(render_fact(f))
        assert [(g.kind, g.value) for g in again] == [(f.kind, f.value)], (f, render_fact(f), again)
        assert render_fact(again[0]) == render_fact(f)

def renderings(won: int) -> list[str]:
    "Ways a Korean text writes the same amount of money."
    out = [f"{won:,}원", f"{won}원"]
    man, rest = divmod(won, 10_000)
    if rest == 0 and man:
        out += [f"{man:,}만원", f"{man:,}만 원"]
        eok, m2 = divmod(man, 10_000)
        if eok and m2 == 0: out.append(f"{eok}억원")
        if eok and m2 and m2 % 1000 == 0: out.append(f"{eok}억{m2 // 1000}천만원")
        if not eok and man % 1000 == 0: out.append(f"{man // 1000}천만원")
    return out

@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=99_999).map(lambda n: n * 10_000) | st.integers(min_value=1, max_value=10**9))
def test_equivalent_amounts_compare_equal(won):
    values = {tuple((f.kind, f.value) for f in extract_numeric_facts(r)) for r in renderings(won)}
    assert values == {(("money", float(won)),)}, (won, renderings(won), values)
    # and the verifier agrees: any rendering in the answer is supported by any other in the context
    r = renderings(won)
    a, c = random.Random(won).sample(r, 2) if len(r) > 1 else (r[0], r[0])
    assert verify_answer(f"보험금은 {a}이다.", [f"보험금은 {c}으로 한다."]).risk_level == RiskLevel.PASS

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 999), st.sampled_from(["", " "]), st.sampled_from(["제", ""]), st.integers(1, 20))
def test_article_refs_spacing_variants(n, sp, je, para):
    circled = chr(0x2460 + para - 1)
    forms = [f"제{n}조 제{para}항", f"제{sp}{n}{sp}조{sp}제{sp}{para}{sp}항", f"{je}{n}조 {circled}", f"{je}{n}조{circled}"]
    refs = {tuple((r.article, r.paragraph) for r in extract_article_refs(f)) for f in forms}
    assert refs == {((f"제{n}조", para),)}, (forms, refs)
