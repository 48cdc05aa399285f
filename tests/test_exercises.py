"""The course exercises' checks refuse answers that skip the work (issue 31): a typed-in table, a formula, a lookup
table of the visible cases, a substring rule, a copy of the library's answer; and accept a correct implementation.
Each reference solution here is the one the lessons show."""
import functools, re
import pytest
from cragrag.course import exercises as E
from cragrag.course.exercises import (check_retries, check_strict_grader, check_route_pattern, check_diagnosis,
                                      check_switch_source, check_rag_failures, check_thresholds, check_calibration,
                                      judge_calls_absent, ROUTE_TARGETS, DIAGNOSIS_CASES, RAG_FAILURE_CASES, GATE_SCORES, EXERCISES)
from cragrag.course.judge import JudgeCRAG
from cragrag.decide.threeway import private_data, corrective_route, ExternalPolicy

# --- references ---------------------------------------------------------------------------------------------------
def measure(search, llm, n, q): return len(JudgeCRAG(search, llm, max_retries=n).run(q).llm_calls)

def strict_grade(answer, context): return set(re.findall(r"\d+", answer)) <= set(re.findall(r"\d+", context))

ROUTE_REF = r"뭐\s*(?:부터\s*)?(?:해야|하면|해\??$)"

def diagnose(v, context, lookup):
    if any(c.semantic_flag for c in v.claims): return "semantic_mismatch"
    if v.missing_refs:
        from cragrag.text.korean import extract_refs
        have = set(extract_refs(" ".join(context))[0])
        if all(set(extract_refs(r)[0]) <= have for r in v.missing_refs): return "wrong_law"
        return "retrieval_gap" if all(lookup(r) for r in v.missing_refs) else "generation_error"
    nums = set(re.findall(r"\d+", " ".join(context)))
    if any(re.search(r"\d+", m["text"]).group() in nums for m in v.numeric_mismatches): return "unit_error"
    return "generation_error"

def switch(query, verdict, internal, external, policy, budget):
    if verdict == "CORRECT": return "use_retrieval"
    if external is None or not policy.allow_external: return "refuse"
    if private_data(query) and not policy.allow_private: return "refuse"
    if budget["left"] <= 0: return "refuse"
    budget["left"] -= 1
    try: found = external.search(policy.outgoing(query))
    except Exception: return "refuse"
    if verdict == "AMBIGUOUS": return "combine"
    return "external_only" if found else "refuse"

def failure_kind(case): return "검색 빗나감" if case["top_score"] < 0.3 else "환각"

def choose(table):
    kind = lambda k: sorted(s for _, x, s in table if x == k)
    an, vg, oc = kind("answerable"), kind("vocabulary_gap"), kind("out_of_corpus")
    return (oc[-1] + an[len(an) // 10]) / 2, min(an[0], vg[len(vg) // 2])

def pick(pos, neg, max_false_pass):
    allowed = int(max_false_pass * len(neg) + 1e-9)
    ranked = sorted(neg, reverse=True)
    cut = ranked[allowed] if allowed < len(neg) else 0.0
    above = [x for x in pos if x > cut]
    return (cut + (min(above) if above else 1.0)) / 2

POS = [s for _, k, s in GATE_SCORES if k == "answerable"]
NEG = [s for _, k, s in GATE_SCORES if k == "out_of_corpus"]
calibration = lambda f: check_calibration(f, POS, NEG)

@functools.lru_cache(maxsize=1)
def bundled():
    "The lesson's pipeline over the bundled corpus, built once: the failure check draws its held-out cases from it."
    from cragrag.answering.pipeline import Pipeline
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    return p

def rag_failures(f, **kw): return check_rag_failures(f, pipeline=bundled(), **kw)

@pytest.mark.parametrize("check, answer", [(rag_failures, failure_kind), (check_thresholds, choose), (calibration, pick),
                                           (check_retries, measure), (check_strict_grader, strict_grade),
                                           (check_route_pattern, ROUTE_REF), (check_diagnosis, diagnose),
                                           (check_switch_source, switch)])
def test_reference_passes(check, answer):
    fb = check(answer)
    assert fb.ok, fb.message

# --- cheats -------------------------------------------------------------------------------------------------------
def _formula_after_run(s, l, n, q):
    JudgeCRAG(s, l, max_retries=n).run(q); return 3 + 2 * n

@pytest.mark.parametrize("cheat", [{0: 3, 2: 7}, {0: judge_calls_absent(0), 2: judge_calls_absent(2)},
                                   lambda s, l, n, q: judge_calls_absent(n), _formula_after_run,
                                   lambda s, l, n, q: {0: 3, 2: 7}[n] if n in (0, 2) else 3 + 2 * n])
def test_retries_refuses_typed_answers(cheat):
    assert not check_retries(cheat).ok

def test_strict_grader_refuses_substring_rule():
    substring = lambda a, c: all(n in c for n in re.findall(r"\d+", a))
    visible = {a: w for a, w, _ in E.STRICT_GRADER_CASES}
    for cheat in (substring, lambda a, c: visible.get(a, False), lambda a, c: visible.get(a, True)):
        assert not check_strict_grader(cheat).ok
    assert "문자열 포함" in check_strict_grader(substring, seed=0).message
    for small, big in [("3일", "30일"), ("1년", "10년"), ("제3조", "제30조"), ("5%", "15%")]:
        assert substring(small, big) and not strict_grade(small, big)      # each near miss catches a substring grader

def test_strict_grader_held_out_cases_are_made_at_check_time():
    "A lookup of every case the module ships passes nothing new; the library's verifier is not the asked grader."
    import random
    from cragrag.check.verify import verify_answer
    from cragrag.core.schema import Source
    shipped = {a: w for a, w, _ in E.STRICT_GRADER_CASES} | {a: w for (a, _), w, _ in E._near_misses(random.Random(0))}
    lookup = lambda a, c: shipped.get(a, strict_grade(a, c) if a in shipped else not re.search(r"\d", a))
    assert not all(check_strict_grader(lookup).ok for _ in range(3))
    verifier = lambda a, c: verify_answer(a, [Source(chunk_id="c", content=c)]).risk_level.value == "pass"
    assert not check_strict_grader(verifier, seed=0).ok and "verify_answer" in check_strict_grader(verifier, seed=0).message
    assert all(check_strict_grader(strict_grade).ok for _ in range(10))      # any draw: the whole-number rule passes

def test_route_held_out_questions_are_composed_at_check_time():
    "A literal alternation of every question the module can show (the visible ones and one draw of the held-out) fails the next draw."
    import random
    held, _ = E._route_heldout(random.Random(0))
    literal = "|".join(re.escape(q) for q in ROUTE_TARGETS + held)
    assert check_route_pattern(literal, seed=0).ok                              # (the draw it copied …)
    assert not check_route_pattern(literal).ok                                  # … not a new one
    assert all(check_route_pattern(ROUTE_REF, seed=s).ok for s in range(50))    # the general pattern passes any draw

def test_route_refuses_visible_table():
    table = "|".join(re.escape(q) for q in ROUTE_TARGETS)
    fb = check_route_pattern(table)
    assert not fb.ok and "새 질문" in fb.message
    assert not check_route_pattern(r"뭐\s*(?:부터\s*)?[해하]").ok            # passes the visible set, too broad on the held-out one
    assert not check_route_pattern(r"뭐").ok

def test_diagnosis_refuses_labels_and_copies():
    labels = {k: v[1] for k, v in DIAGNOSIS_CASES.items()}
    assert not check_diagnosis(labels).ok
    table = {DIAGNOSIS_CASES[k][0]: w for k, w in labels.items()}
    by_table = lambda v, c, lk: next((w for a, w in table.items() if v.claims and a.startswith(v.claims[0].claim[:15])), "generation_error")
    fb = check_diagnosis(by_table)
    assert not fb.ok and "새 답" in fb.message                                # right on A–D, wrong on the answers written at check time
    from cragrag.check.critic import classify_failure
    fb = check_diagnosis(lambda v, c, lk: classify_failure(v, c, lk).failure_type)
    assert not fb.ok and "법 이름" in fb.message                              # the critic (copied or cloned) calls a wrong law a retrieval gap
    assert all(check_diagnosis(diagnose, seed=s).ok for s in range(10))

def test_switch_refuses_copies_leaks_and_policy_blind():
    copy = lambda q, v, i, e, p, b: corrective_route(q, v, i, e, p).strategy   # the library's route (no budget): no spy needed
    assert not check_switch_source(copy).ok and "예산" in check_switch_source(copy).message
    class Keeps(ExternalPolicy):                                                # the old cheat: a subclass keeping the original blocked
        pass
    clone = lambda q, v, i, e, p, b: corrective_route(q, v, i, e, Keeps(p.allow_external, p.allow_private, p.mask_pii)).strategy
    assert not check_switch_source(clone).ok
    def leaky(q, v, i, e, p, b):
        found = e.search(q) if e else []
        if v == "CORRECT": return "use_retrieval"
        if e is None or not p.allow_external or (private_data(q) and not p.allow_private) or b["left"] <= 0: return "refuse"
        b["left"] -= 1
        return "combine" if v == "AMBIGUOUS" else "external_only" if found else "refuse"
    assert "보내면 안 됩니다" in check_switch_source(leaky).message
    no_privacy = lambda q, v, i, e, p, b: switch(q, v, i, e, ExternalPolicy(p.allow_external, True, p.mask_pii), b)
    assert "개인정보" in check_switch_source(no_privacy).message
    unmasked = lambda q, v, i, e, p, b: switch(q, v, i, e, ExternalPolicy(p.allow_external, p.allow_private, False), b)
    assert "policy.outgoing" in check_switch_source(unmasked).message
    unspent = lambda q, v, i, e, p, b: switch(q, v, i, e, p, dict(b))
    assert "줄여야" in check_switch_source(unspent).message
    three_arms = lambda q, v, i, e, p, b: {"CORRECT": "use_retrieval", "AMBIGUOUS": "combine"}.get(v, "external_only")
    assert not check_switch_source(three_arms).ok
    assert not check_switch_source({"CORRECT": "use_retrieval"}).ok
    assert all(check_switch_source(switch, seed=s).ok for s in range(5))

def test_failures_refuse_labels_and_visible_lookups():
    assert not rag_failures({"A": "검색 빗나감", "B": "환각"}).ok                  # the typed answer of the old exercise
    visible = {c["question"]: c["label"] for c in RAG_FAILURE_CASES.values()}
    for cheat in (lambda c: visible.get(c["question"], "환각"), lambda c: visible.get(c["question"], "검색 빗나감"), lambda c: "환각"):
        assert not rag_failures(cheat).ok
    numbers = lambda c: "환각" if set(re.findall(r"\d+", c["answer"])) - set(re.findall(r"\d+", c["evidence"])) else "검색 빗나감"
    assert not rag_failures(numbers).ok                                         # a flipped sentence keeps its numbers

def test_failures_held_out_cases_are_made_at_check_time():
    "A dict of every case the module can show (A, B and one draw of the held-out) fails the next draw; the score rule passes any."
    import random
    shipped = {c["question"]: c["label"] for c in list(RAG_FAILURE_CASES.values()) + E._rag_failure_heldout(bundled(), random.Random(0))}
    lookup = lambda c: {"retrieval_miss": "검색 빗나감", "hallucination": "환각"}[shipped.get(c["question"], "hallucination")]
    assert rag_failures(lookup, seed=0).ok and not rag_failures(lookup, seed=1).ok
    assert all(rag_failures(failure_kind, seed=s).ok for s in range(5))

@pytest.mark.parametrize("typed", [(0.3, 0.1), (0.3, 0.125), (0.2, 0.05), (0.4, 0.11)])
def test_thresholds_refuse_constants(typed):
    assert not check_thresholds(typed).ok                                       # a pair, not a rule
    assert not check_thresholds(lambda t: typed).ok                             # a rule that ignores its table

def test_thresholds_scales_are_drawn_at_check_time():
    "The cheat that recognises the check's rescaled tables and carries (0.3, 0.1) through them: the scales are new at every check."
    import random
    import cragrag.course.exercises as ex
    def carried(table):
        for seed in range(50):                                                  # every scale the cheat can reproduce
            for _, f in ex._scales(random.Random(seed)):
                if all(abs(round(f(s), 4) - x) < 1e-6 for (_, _, s), (_, _, x) in zip(ex.GATE_SCORES, table)): return f(0.3), f(0.1)
        return 0.3, 0.1
    assert check_thresholds(carried, seed=7).ok                                 # (a seed it knows: the cheat works there …)
    assert not check_thresholds(carried).ok                                     # … not on the scales drawn afresh
    assert all(check_thresholds(choose).ok for _ in range(5))                   # the reference rule passes whatever is drawn

def test_thresholds_hold_on_any_order_preserving_scale():
    import math
    for f in (lambda s: s, lambda s: s ** 2, lambda s: 1 / (1 + math.exp(-8 * (s - 0.3))), lambda s: 0.1 + 0.3 * s):
        t = [(q, k, f(s)) for q, k, s in GATE_SCORES]
        assert check_thresholds(choose, t).ok                                   # the reference rule is not tuned to the check's scales

def test_calibration_refuses_numbers_copies_and_ties():
    assert not calibration(0.2).ok and "함수" in calibration(0.2).message
    assert not calibration(lambda p, n, m: 0.2).ok                              # right here, wrong on the held-out sets
    from cragrag.decide.calibration import choose_thresholds
    fb = calibration(lambda p, n, m: choose_thresholds(p, n, max_false_pass=m).pass_threshold)
    assert not fb.ok and "한가운데" in fb.message                              # the library's threshold is not the asked one: no spy needed
    assert not calibration(lambda p, n, m: sorted(n, reverse=True)[int(m * len(n) + 1e-9)]).ok   # the tied cut lets one more pass
    assert all(check_calibration(pick, POS, NEG, seed=s).ok for s in range(30))

@pytest.mark.parametrize("check", [check_retries, check_strict_grader, check_route_pattern, check_diagnosis, check_switch_source,
                                   rag_failures, check_thresholds, calibration])
def test_unfilled_todo_is_a_hint_not_an_error(check):
    for todo in (None, ...):
        fb = check(todo)
        assert not fb.ok and fb.message.startswith("TODO")
    assert not check(lambda *a: 1 / 0).ok if check is not check_route_pattern else True

def test_exercise_table_names_every_check():
    assert all(callable(getattr(E, fn)) for _, _, fn in EXERCISES)
    assert ("03_judge_and_loop_safety", "check_switch_source") in {(nb, fn) for nb, _, fn in EXERCISES}

def test_claim_rule_needs_the_rule():
    "Remembering the visible false claims passes nothing new; the extract_refs subset rule passes every draw."
    from cragrag.course.exercises import check_claim_rule, CLAIM_CASES
    from cragrag.text.korean import extract_refs
    two_false = {c for c, ok, _ in CLAIM_CASES if not ok}
    assert not check_claim_rule(lambda c, x: c not in two_false).ok
    rule = lambda c, x: set(extract_refs(c)[0]) <= set(extract_refs(x)[0])
    assert all(check_claim_rule(rule, seed=s).ok for s in range(30)) and check_claim_rule(rule).ok

def test_grounded_validator_needs_the_contract():
    "A validator keyed on the visible chunk id (c1) fails the contracts drawn at check time; the contract rule passes every draw."
    from cragrag.course.exercises import check_grounded_validator
    keyed = lambda g: bool(g.get("failure_reason")) or (bool(g["claims"]) and g["claims"][0]["chunk_ids"] == ["c1"])
    assert not check_grounded_validator(keyed).ok
    def valid(g):
        if g.get("failure_reason"): return True
        ids = {i for e in g.get("evidence", []) for i in e.get("chunk_ids", [])}
        return bool(g.get("direct_answer")) and bool(g.get("claims")) and all(c["chunk_ids"] and set(c["chunk_ids"]) <= ids for c in g["claims"])
    assert all(check_grounded_validator(valid, seed=s).ok for s in range(30)) and check_grounded_validator(valid).ok

def test_fallback_needs_the_budget():
    "The library's edge (no budget) and a table of the twelve small states of the old exercise fail; the budgeted rule passes any draw."
    from cragrag.course.exercises import check_fallback
    from cragrag.course.judge import JudgeState, decide_after_docs
    library = lambda rel, r, mr, c: decide_after_docs(JudgeState("q", "q", docs_relevant=rel, retries=r), mr, only_grounded=True)
    assert not check_fallback(library).ok
    twelve = {(rel, r, mr): library(rel, r, mr, 99) for mr in (0, 1, 2) for r in range(mr + 1) for rel in (True, False)}
    assert not check_fallback(lambda rel, r, mr, c: twelve.get((rel, r, mr), "fallback")).ok
    decide = lambda rel, r, mr, c: ("generate" if c >= 2 else "fallback") if rel else ("rewrite" if r < mr and c >= 4 else "fallback")
    assert all(check_fallback(decide, seed=s).ok for s in range(30)) and check_fallback(decide).ok
