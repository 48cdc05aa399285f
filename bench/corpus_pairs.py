"""(query, article) pairs a corpus gives for free, without a labelled question: shared by bench/adapter.py and
bench/feedback_signals.py. The gate's probe questions come from `cragrag.decide.probes.probe_questions`; this module adds
reference pairs: the words that follow a resolved reference in an article ("제5조에 따른 소방안전관리자를 선임" → the
words after "제5조", cut at the clause's end) → the article the reference reaches (`cragrag.indexing.refgraph`)."""
import random, re
from collections import defaultdict
from cragrag.indexing.refgraph import article_edges, docs_index, document_aliases, resolve_edge

CUT = re.compile(r"[.。;:\n]|(?:하여야|한다|하며|하고|된다|이다|있다|없다)")
LEAD = re.compile(r"^[\s)\]」』,·ㆍ]*(?:제\d+항|제\d+호|각\s*호)?[\s,·ㆍ]*(?:에\s*따른|에\s*따라|에서|의|에|을|를|와|과|및|또는)?\s*")

def ref_pairs(chunks, rnd: random.Random, cap: int) -> list[tuple[str, tuple]]:
    "(the words after a resolved reference, the (doc_id, article_id) it reaches) for references between indexed articles; `cap` of them, sampled by `rnd`."
    docs = docs_index(chunks)
    texts = defaultdict(list)
    for c in chunks: texts[c.doc_id].append(c.text)
    aliases = {d: document_aliases("\n".join(t[:30]), docs[d]["title"]) for d, t in texts.items()}
    out = []
    for c in chunks:
        if not c.article_id: continue
        for e in article_edges(c.text, c.doc_title, aliases[c.doc_id], c.article_id):
            t = resolve_edge(e, c.doc_id, docs)
            if t is None or t[1] is None or t == (c.doc_id, c.article_id): continue
            tail = CUT.split(LEAD.sub("", c.text[e.span[1]:e.span[1] + 60]))[0].strip()
            if len(tail) >= 4: out.append((tail, t))
    rnd.shuffle(out)
    return out[:cap]
