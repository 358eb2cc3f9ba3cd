"""Answer checks: does the claim checker (docchat/context/claims.py) find true statements and
refuse changed ones, and does the evidence shown first hold the answer?

    python bench/answers.py [--json] [--sets tuning,tune2] [--budget 8000] [--model N]
                            [--eval-dir DIR] [--tune2-dir DIR] [--fresh-dir DIR] [--cache DIR]

For each question of the sets (their evidence strings are the known answers) the question is
packed as qa.ask packs it (8k prompt tokens by default, counted by tiktoken cl100k) and
  (a) each evidence string that went into the pack becomes true statements, made by code: the
      string itself and a light rewording ("According to the document, ..." and a few
      synonyms); they should be "supported", on the page where the string is;
  (b) the same statements with one fact changed by code (a number + 1, a name swapped for
      another name of the passages, a negation added or removed) should not be "supported";
  (c) with --model N, the default backend answers N questions end to end: the share of their
      statements supported, of answers with a correct page link (the checker's, and the
      model's own [p. N]), and of answers stopped for repetition (the answer's finish reason);
  (d) the evidence sentences (evidence.find_evidence, in the order the app shows them): the
      answer in one of them, and in the first one (questions whose evidence is a sentence,
      not the outline kind, whose evidence strings are headings).
Plus the time to check a 1,000-token answer against an 8k-token context (median of 5).
Sets: tuning (bench/eval/questions.json, split tuning), tune2 (bench/eval/tune2.json); held
out: test (questions.json split test), fresh (bench/eval/fresh.json) and any blind*.json in
bench/eval: for those only totals are printed, never a question.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.packing import Cl100k, Library, fetched, read_set, squash  # noqa: E402
from docchat.context import claims, clauses, facts  # noqa: E402
from docchat.context.claims import SUPPORTED, check_answer, sources_for  # noqa: E402
from docchat.context.evidence import find_evidence  # noqa: E402
from docchat.context.packing import pack  # noqa: E402
from ingest.segment import cjk_ratio  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT / "bench" / "eval"
HELD_OUT = ("test", "fresh")
FIRST_KINDS = ("number", "name", "negation")  # (b)'s changes since its first figures
SECOND_KINDS = ("number2", "negation2", "swap")  # added with the clause checks
JOINERS = frozenset("and or nor but also 和 与 及 或 以及 或者 跟 同".split())
MIN_WORDS = 5  # shorter evidence strings (headings, names) make no statement
SYNONYMS = {"uses": "employs", "use": "employ", "shows": "displays", "allows": "lets",
            "makes": "renders", "creates": "produces", "gives": "provides",
            "contains": "includes", "important": "significant", "big": "large"}
_AUX = re.compile(r"\b(is|are|was|were|can|will|must|should|does|do|may|has|have|shall)\b ")
_ZH_AUX = re.compile(r"(必须|可以|需要|应该|应当|能够|能|会|是|支持)")
_NUM = re.compile(r"(?<![A-Za-z0-9.])(\d+)(\.\d+)?")


def set_items(name: str, args) -> tuple[list, dict]:
    """(items, {doc key: path}) of a set."""
    if name in ("tuning", "test"):
        docs, items = read_set(EVAL / "questions.json", name, split=name)
        folder = fetched(ROOT / "bench" / "fetch_eval_docs.sh", args.eval_dir)
    elif name == "tune2":
        docs, items = read_set(EVAL / "tune2.json", name)
        folder = fetched(ROOT / "bench" / "fetch_tune2_docs.sh", args.tune2_dir)
    elif name == "fresh":
        docs, items = read_set(EVAL / "fresh.json", name)
        folder = fetched(ROOT / "bench" / "fetch_fresh_docs.sh", args.fresh_dir)
    else:  # a blind set: bench/eval/<name>.json naming its own fetch script
        path = EVAL / f"{name}.json"
        spec = json.loads(path.read_text(encoding="utf-8"))
        docs, items = read_set(path, name)
        folder = fetched(ROOT / spec["source"], None)
    return items, {k: folder / rel for k, rel in docs.items()}


def reworded(text: str) -> str:
    """A light rewording by code: a lead-in and a few synonyms."""
    if cjk_ratio(text) >= 0.3:
        return "文档指出，" + text
    words = [SYNONYMS.get(w, w) for w in text.split(" ")]
    first = words[0] if words[0].isupper() or not words[0] else words[0][0].lower() + words[0][1:]
    return "According to the document, " + " ".join([first] + words[1:])


def mutations(text: str, other_names: list[str]) -> dict[str, str]:
    """The statement with one fact changed, per kind of change that applies: the first number,
    the first name, a negation (the kinds since the first figures); and, where there are two,
    the last number ("number2"), a negation in the second clause ("negation2"), the first two
    names swapped ("swap")."""
    out = {}
    m = _NUM.search(text)
    if m:
        out["number"] = _bumped(text, m)
    present = sorted(facts.names(text))
    swap = next((n for n in other_names if n not in present), None)
    if present and swap:
        target = present[0]
        at = text.lower().find(target)
        out["name"] = text[:at] + swap.capitalize() + text[at + len(target):]
    if _negate(text):
        out["negation"] = _negate(text)
    out.update(second_changes(text))
    return {k: v for k, v in out.items() if v and v != text}


def second_changes(text: str) -> dict[str, str]:
    """The changes past the first fact: the last of two or more numbers, a negation added to
    (or removed from) the second clause, the first two names of the sentence swapped."""
    out = {}
    nums = list(_NUM.finditer(text))
    if len(nums) >= 2:
        out["number2"] = _bumped(text, nums[-1])
    parts = clauses.split(text, claims._words)
    if len(parts) >= 2:
        rest = _negate(text[parts[1].start:])
        if rest:
            out["negation2"] = text[:parts[1].start] + rest
    named = []
    for low, said, at, initial in facts.name_spans(text):
        if not initial and low not in {n[0] for n in named}:
            named.append((low, said, at))
    # Two names in different roles: words between them, not a list ("TMP 和 TEMP") or one
    # name of several words ("GNU General Public License").
    pair = next(((x, y) for x, y in zip(named, named[1:])
                 if set(claims._words(text[x[2] + len(x[1]):y[2]])) - JOINERS), None)
    if pair:
        (_, a, i), (_, b, j) = pair
        out["swap"] = text[:i] + b + text[i + len(a):j] + a + text[j + len(b):]
    return out


def _bumped(text: str, m: re.Match) -> str:
    """text with the number m + 1 (to a value the text lacks)."""
    value = int(m.group(1)) + 1
    while re.search(rf"(?<![\d.]){value}(?![\d])", text):
        value += 1
    return text[:m.start()] + str(value) + (m.group(2) or "") + text[m.end():]


def _negate(text: str) -> str | None:
    """text with a negation added after its first auxiliary verb, or its first one removed
    (Chinese: 不 added before the first modal verb, or removed)."""
    if cjk_ratio(text) >= 0.3:
        if "不" in text:
            return text.replace("不", "", 1)
        if _ZH_AUX.search(text):
            return _ZH_AUX.sub(lambda a: "不" + a.group(1), text, count=1)
        return None
    if facts.negated(text):
        out = re.sub(r"\b(?:not|no|never)\s+|n't\b|\bwithout\b", lambda m: "with"
                     if m.group(0) == "without" else "", text, count=1)
    elif _AUX.search(text):
        out = _AUX.sub(lambda a: a.group(1) + " not ", text, count=1)
    else:
        return None
    return None if re.search(r"\bnot only\b", out) else out  # "not only" negates nothing


def evidence_pages(doc, evidence: str) -> set:
    """The pages where the evidence string starts or ends (None for text documents)."""
    if doc.kind != "pdf":
        return {None}
    e = squash(evidence)
    out = {p.number for p in doc.pages if e[:30] in squash(p.text) or e[-30:] in squash(p.text)}
    return out


def shown_hit(evidence: list[str], sentences: list[str]) -> bool:
    for e in map(squash, evidence):
        for s in sentences:
            s = squash(s.rstrip(" …"))
            if e in s or (len(s) >= len(e) // 2 and s in e) or e[:40] in s:
                return True
    return False


def check_item(item, docs, budget: int, counter, store, out: dict) -> None:
    """Statements (a), changed statements (b) and evidence (d) of one question (the outline
    kind's evidence strings are headings: no statements, no sentences to show)."""
    packed = pack(docs, item.question, counter, history=item.history,
                  search=store.searcher([d.id for d in docs]), max_new_tokens=512,
                  context_window=budget + 512, store=store)
    sources = sources_for(packed, docs)
    flat = squash(packed.text)
    names = sorted({n for s in sources for n in facts.names(s.text)})
    for e in item.evidence if item.kind != "outline" else ():
        if len(e.split()) < MIN_WORDS and cjk_ratio(e) < 0.3 or squash(e) not in flat:
            continue
        doc = next((d for d in docs if squash(e) in squash(d.text)), docs[0])
        pages = evidence_pages(doc, e)
        for variant, text in (("verbatim", e), ("reworded", reworded(e))):
            got = _real(check_answer(text, sources))
            ok = bool(got) and all(st.status == SUPPORTED for st in got)
            out["a"].append((item, variant, ok, ok and got[0].page in pages, text))
            for kind, changed in mutations(text, names).items():
                got = _real(check_answer(changed, sources))
                refused = any(st.status != SUPPORTED for st in got)
                out["b"].append((item, kind, refused, changed))
    if item.kind != "outline":
        shown = [s.text for ev in find_evidence(docs, packed.sections, item.question)
                 for s in ev.sentences]
        out["d"].append((item, shown_hit(item.evidence, shown),
                         shown_hit(item.evidence, shown[:1])))


def _real(check) -> list:
    return [s for s in check.statements if s.status != "exempt"]


def speed(docs, item, counter, store, repeat: int = 5) -> dict:
    """ms to check a 1,000-token answer (its sentences from the pack, every other one with a
    number changed) against the question's 8k-token pack: the first run and the median."""
    packed = pack(docs, item.question, counter, search=store.searcher([d.id for d in docs]),
                  max_new_tokens=512, context_window=8000 + 512, store=store)
    sources = sources_for(packed, docs)
    sentences = [s.text[a:b] for s in sources for a, b in facts.sentence_spans(s.text)]
    parts, tokens = [], 0
    for k, text in enumerate(sentences[::3]):
        text = " ".join(text.split())
        changed = mutations(text, []).get("number") if k % 2 else None
        parts.append(changed or text)
        tokens += counter.count_tokens(parts[-1])
        if tokens >= 1000:
            break
    answer = "\n".join(parts)
    runs, cached = [], []
    for _ in range(repeat + 1):
        claims._CACHE.clear()  # the passages indexed anew each time, as for a new answer
        t = time.perf_counter()
        check = check_answer(answer, sources)
        runs.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        check_answer(answer, sources)  # the same passages again: a streamed answer's rechecks
        cached.append((time.perf_counter() - t) * 1000)
    return {"answer_tokens": tokens, "context_tokens": packed.tokens, "statements": check.total,
            "first_ms": round(runs[0], 1), "median_ms": round(statistics.median(runs[1:]), 1),
            "same_passages_ms": round(statistics.median(cached[1:]), 1),
            "load_average": round(os.getloadavg()[0], 1)}


def model_run(items, lib, paths, n: int) -> dict:
    """(c): the default backend answers n questions; the checker judges the answers."""
    from docchat.answer.qa import ask
    from docchat.backends import get_backend
    from docchat.config import Settings

    settings = Settings.from_env()
    engine = get_backend(settings.backend, **settings.backend_options())
    rows = []
    for item in [i for i in items if i.kind == "verbatim"][:n]:
        docs = [lib.get(paths[(item.set, k)]) for k in item.docs]
        answer = ask(docs, item.question, engine, preset="quick",
                     search=lib.store.searcher([d.id for d in docs]))
        text = "".join(answer)
        check = check_answer(text, sources_for(answer.packed, docs))
        pages = set().union(*(evidence_pages(d, e) for d in docs for e in item.evidence
                              if squash(e) in squash(d.text)))
        linked = any(s.status == SUPPORTED and s.page in pages for s in check.statements)
        cited = any(lab in {str(p) for p in pages} for s in check.statements for lab in s.cited)
        finish = (answer.metrics or {}).get("finish_reason") or \
            (answer.metrics or {}).get("model", {}).get("finish_reason")
        rows.append({"supported": check.supported, "total": check.total, "linked": linked,
                     "cited": cited, "repetition": finish == "repetition"})
    total = sum(r["total"] for r in rows) or 1
    return {"answers": len(rows), "statements_supported": sum(r["supported"] for r in rows)
            / total, "page_link": share([r["linked"] for r in rows]),
            "model_cited_page": share([r["cited"] for r in rows]),
            "repetition": share([r["repetition"] for r in rows]), "model": engine.model}


def share(v) -> float | None:
    v = list(v)
    return round(sum(map(bool, v)) / len(v), 3) if v else None


def summary(out: dict) -> dict:
    a, b, d = out["a"], out["b"], out["d"]
    verb = [r for r in d if r[0].kind == "verbatim"]
    return {
        "a_supported": share(r[2] for r in a), "a_right_page": share(r[3] for r in a),
        "a_statements": len(a),
        "b_refused": share(r[2] for r in b if r[1] in FIRST_KINDS),
        "b_statements": sum(r[1] in FIRST_KINDS for r in b),
        **{f"b_{k}": share(r[2] for r in b if r[1] == k) for k in FIRST_KINDS + SECOND_KINDS},
        "b2_refused": share(r[2] for r in b if r[1] in SECOND_KINDS),
        "b2_statements": sum(r[1] in SECOND_KINDS for r in b),
        "d_shown": share(r[1] for r in d), "d_first": share(r[2] for r in d),
        "d_questions": len(d), "d_verbatim_shown": share(r[1] for r in verb),
        "d_verbatim_first": share(r[2] for r in verb), "d_verbatim": len(verb)}


def misses(out: dict) -> list[str]:
    lines = [f"(a) {r[0].id} {r[1]}: {'not supported' if not r[2] else 'wrong page'}: {r[4]}"
             for r in out["a"] if not r[3]]
    lines += [f"(b) {r[0].id} {r[1]} supported: {r[3]}" for r in out["b"] if not r[2]]
    lines += [f"(d) {r[0].id} {r[0].kind}: {'first' if r[1] else 'shown'} misses"
              for r in out["d"] if not r[2]]
    return lines


def table(results: dict) -> str:
    head = ("set", "a sup", "a page", "n", "b refused", "num", "name", "neg", "n",
            "b2 refused", "num2", "neg2", "swap", "n", "d shown", "d first", "n", "verb shown",
            "verb first", "n")
    lines = ["  ".join(f"{h:>9}" for h in head)]
    keys = ("a_supported", "a_right_page", "a_statements", "b_refused", "b_number", "b_name",
            "b_negation", "b_statements", "b2_refused", "b_number2", "b_negation2", "b_swap",
            "b2_statements", "d_shown", "d_first", "d_questions",
            "d_verbatim_shown", "d_verbatim_first", "d_verbatim")
    for name, s in results["sets"].items():
        cells = [name] + ["-" if s[k] is None else f"{s[k]:.2f}" if isinstance(s[k], float)
                          else str(s[k]) for k in keys]
        lines.append("  ".join(f"{c:>9}" for c in cells))
    sp = results.get("speed")
    if sp:
        lines.append(f"check of a {sp['answer_tokens']}-token answer ({sp['statements']} "
                     f"statements) against a {sp['context_tokens']}-token context: first "
                     f"{sp['first_ms']} ms, median {sp['median_ms']} ms, same passages again "
                     f"{sp['same_passages_ms']} ms (load average {sp['load_average']})")
    if results.get("model"):
        lines.append("model end to end: " + json.dumps(results["model"]))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sets", default="tuning,tune2")
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--model", type=int, default=0, metavar="N",
                    help="also answer N verbatim questions with the default backend (slow)")
    ap.add_argument("--verbose", action="store_true", help="list misses (tuning sets only)")
    ap.add_argument("--eval-dir")
    ap.add_argument("--tune2-dir")
    ap.add_argument("--fresh-dir")
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "docchat-eval"))
    args = ap.parse_args()
    lib, counter = Library(Path(args.cache)), Cl100k(args.budget + 512)
    results: dict = {"sets": {}, "budget": args.budget, "counter": counter.name}
    all_items, paths, verbose = [], {}, []
    for name in [s for s in args.sets.split(",") if s]:
        items, docs = set_items(name, args)
        paths.update({(name, k): p for k, p in docs.items()})
        out: dict = {"a": [], "b": [], "d": []}
        for item in items:
            check_item(item, [lib.get(docs[k]) for k in item.docs], args.budget, counter,
                       lib.store, out)
        results["sets"][name] = summary(out)
        all_items += items
        if args.verbose and name not in HELD_OUT and not name.startswith("blind"):
            verbose += misses(out)
    first = next((i for i in all_items if i.kind == "verbatim"), None)
    if first is not None:
        results["speed"] = speed([lib.get(paths[(first.set, k)]) for k in first.docs], first,
                                 counter, lib.store)
    if args.model:
        results["model"] = model_run(all_items, lib, paths, args.model)
    print(json.dumps(results, ensure_ascii=False) if args.json else table(results))
    for line in verbose:
        print(line)


if __name__ == "__main__":
    main()
