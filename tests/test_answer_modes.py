"""One answer per question across answer modes: the default gate, the grounded contract, sufficiency mode, multi-query
retrieval and the three-way branch give the same direct answer, or the same refusal, to one-sentence questions of the
bundled golden set; sufficiency never answers what the gate refuses; the grounded contract never says 미확인 where the
default states the value from a cited unit; and no golden question the offline default answered before the direct
answer (tests/data/golden_answered.json, written by the previous release) is refused now."""
import json, re
from pathlib import Path
import pytest
from cragrag.answering.pipeline import Pipeline
from cragrag.evaluate.eval import bundled_golden

MODES = {"default": {}, "grounded": {"grounded_answer": True}, "sufficiency": {"answer_mode": "sufficiency"},
         "multi_query": {"multi_query": True}, "three_way": {"crag_mode": "three_way"}}
ONE_SENTENCE = re.compile(r"^[^.!?]*[.!?]?\s*$")   # one question, no situation told before it

def outcome(res) -> str:
    "What a user is told: refused, 미확인, the direct answer, or answered (a question that asks for no value)."
    if res.is_refusal: return "미확인" if res.refusal_reason == "grounded_unverified" else "refused"   # the contract's 미확인 is its refusal
    return res.direct_answer or ("미확인" if res.failure_reason else "answered")

@pytest.fixture(scope="module")
def table():
    "Each golden question's outcome on the demo corpus: in every mode for a one-sentence question, in the default mode for the others."
    p = Pipeline(qdrant_path=":memory:", trace_enabled=False); p.index(progress=False)
    one = lambda q: ONE_SENTENCE.match(q.question.strip())
    yield {q.id: {m: outcome(p.answer(q.question, **kw)) for m, kw in MODES.items() if one(q) or m == "default"} for q in bundled_golden()}
    p.close()

def test_modes_agree(table):
    table = {i: o for i, o in table.items() if len(o) == len(MODES)}
    disagree = {i: o for i, o in table.items() if len(set(o.values())) > 1}
    assert len(table) >= 150 and len(disagree) <= 0.05 * len(table), f"{len(disagree)} of {len(table)} disagree: {disagree}"

def test_sufficiency_never_answers_what_the_gate_refuses(table):
    assert [i for i, o in table.items() if len(o) > 1 and o["default"] == "refused" and o["sufficiency"] not in ("refused", "미확인")] == []

def test_grounded_never_unconfirms_a_stated_value(table):
    stated = lambda o: o not in ("refused", "미확인", "answered")
    assert [i for i, o in table.items() if len(o) > 1 and stated(o["default"]) and o["grounded"] in ("refused", "미확인")] == []

def test_no_golden_question_moves_to_refused(table):
    before = json.loads((Path(__file__).parent / "data" / "golden_answered.json").read_text(encoding="utf-8"))
    assert len(before) >= 100 and [i for i in before if table[i]["default"] == "refused"] == []
