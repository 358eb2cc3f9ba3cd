"""Comparing two versions: alignment with renumbering and moves, the word redline, Chinese,
a PDF pair, the CLI's JSON, bad input, the stored comparison, questions and summaries."""
from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner
from factories import Chars, RecordingBackend, titled_doc

from docchat.cli import cli
from docchat.comparison import ask as compare_ask
from docchat.comparison.align import Comparison, compare, title_key
from docchat.comparison.redline import Paragraph, diff, shortened, to_text
from ingest import load_document

DATA = Path(__file__).resolve().parents[1] / "data"

CONTRACT = [
    ("1. Scope", "This agreement covers the supply of widgets to the Buyer by the Seller."),
    ("2. Fees", "The Buyer pays the fee within 30 days of the invoice date. Late payment "
                "bears interest at 2 percent per month."),
    ("3. Delivery", "The Seller delivers the widgets to the Buyer's warehouse in Leeds."),
    ("4. Warranty", "The widgets are free of defects for 12 months from delivery."),
    ("5. Termination", "Either party may end this agreement with 90 days written notice."),
    ("6. Governing law", "This agreement is governed by the laws of England and Wales."),
]


def by_heading(c: Comparison) -> dict[str, object]:
    return {p.heading: p for p in c.pairs}


def test_renumbered_and_moved_sections_still_align():
    old = titled_doc("v1.pdf", CONTRACT)
    # v2: "4. Warranty" moved to the front, everything renumbered, one number changed
    texts = [CONTRACT[3]] + CONTRACT[:3] + CONTRACT[4:]
    texts = [(f"{k + 1}. {t.split('. ', 1)[1]}", b) for k, (t, b) in enumerate(texts)]
    texts[2] = (texts[2][0], texts[2][1].replace("30 days", "45 days"))
    new = titled_doc("v2.pdf", texts)
    c = compare(old, new)
    pairs = by_heading(c)
    assert len(c.pairs) == 6  # every section aligned: nothing added or removed
    assert pairs["1. Warranty"].status == "moved"
    assert pairs["1. Warranty"].old.heading == "4. Warranty"
    fees = pairs["3. Fees"]
    assert fees.status == "changed" and fees.old.heading == "2. Fees"
    assert fees.deleted == ["30"] and fees.inserted == ["45"]
    assert fees.old.pages == ("2",) and fees.new.pages == ("3",)
    for heading in ("2. Scope", "4. Delivery", "5. Termination", "6. Governing law"):
        assert pairs[heading].status == "unchanged", heading  # renumbered only
    assert c.summary() == {"unchanged": 4, "changed": 1, "moved": 1, "added": 0, "removed": 0}
    assert c.verdict == "changed" and c.aligned > 0.9


def test_added_and_removed_sections_keep_their_place():
    old = titled_doc("v1.txt", CONTRACT)
    new = titled_doc("v2.txt", CONTRACT[:2] + [("3. Insurance", "The Seller insures the "
                                                "goods until they reach the Buyer's hands.")]
                     + CONTRACT[3:5])
    c = compare(old, new)
    statuses = [(p.status, p.heading) for p in c.pairs]
    assert ("added", "3. Insurance") in statuses
    assert ("removed", "6. Governing law") in statuses
    assert c.pairs[-1].status == "removed"


def test_number_words_of_a_heading_are_not_a_change():
    assert title_key("3.2 Version") == "version" == title_key("Section 4.2: Version")
    assert title_key("第三章 总则") == "总则" == title_key("一、总则")
    assert title_key("A Note") == "a note"  # a leading article is not a number
    assert title_key("Part Civil Procedure") == "part civil procedure"  # "Civ" is no numeral
    assert title_key("Part IV Remedies") == "remedies"


def test_redline_folds_short_equal_runs_and_keeps_pages():
    ops = diff([Paragraph("Keep this. The fee is 30 days now.", 4)],
               [Paragraph("Keep this. The charge is 31 days now.", 7)])
    assert [o.op for o in ops] == ["=", "-", "+", "="]
    assert ops[1].text == "fee is 30" and ops[2].text == "charge is 31"
    assert (ops[1].old_page, ops[1].new_page) == (4, 7)
    assert to_text(ops) == "Keep this. The [-fee is 30-] {+charge is 31+} days now."


def test_long_unchanged_runs_are_shortened_around_changes():
    words = " ".join(f"w{k}" for k in range(300))
    ops = diff([Paragraph(words + " end", 1)], [Paragraph(words + " finish", 1)])
    short = shortened(ops, context=5)
    assert short[0].text.startswith("…") and len(short[0].text.split()) == 6
    assert [o.op for o in short] == ["=", "-", "+"]


def test_chinese_is_diffed_by_jieba_words():
    old = titled_doc("旧.txt", [("第一条 付款", "买方应在收到发票后三十日内付款。"),
                               ("第二条 交付", "卖方应将货物交付至买方仓库。")], language="zh")
    new = titled_doc("新.txt", [("第一条 付款", "买方应在收到发票后六十日内付款。"),
                               ("第二条 交付", "卖方应将货物交付至买方仓库。")], language="zh")
    c = compare(old, new)
    pay = by_heading(c)["第一条 付款"]
    assert pay.status == "changed"
    assert pay.deleted == ["三十日"] or pay.deleted == ["三十"], pay.deleted
    assert "".join(pay.inserted) in ("六十日", "六十")
    assert by_heading(c)["第二条 交付"].status == "unchanged"


def _pdf(path: Path, pages: list[list[str]]) -> Path:
    spec = importlib.util.spec_from_file_location("make_pdfs", DATA / "app" / "make_pdfs.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    make.PAGES = pages
    path.write_bytes(make.build())
    return path


def test_a_pdf_pair_keeps_the_pages_of_both_versions(tmp_path):
    pages = [["Preface", "This guide explains the Frobnicator 3000."],
             ["1 Setup", "Install the Frobnicator with the command frob install.",
              "The default port is 8731. Keep the lid closed while it runs."],
             ["2 Safety", "Never feed the Frobnicator after midnight.",
              "The warranty lasts 7 years from the date of purchase."]]
    old = load_document(_pdf(tmp_path / "v1.pdf", pages))
    pages[0][1] = "This guide explains the Frobnicator 3000, model B."
    pages[2][2] = "The warranty lasts 5 years from the date of purchase."
    new = load_document(_pdf(tmp_path / "v2.pdf", pages))
    c = compare(old, new)
    assert c.verdict == "changed" and c.summary()["changed"] == len(c.changed) >= 1
    ops = [o for p in c.changed for o in p.ops]
    seven = next(o for o in ops if o.op == "-" and "7" in o.text)
    five = next(o for o in ops if o.op == "+" and "5" in o.text)
    assert (seven.old_page, seven.new_page) == (3, 3) == (five.old_page, five.new_page)
    model = next(o for o in ops if o.op == "+" and "model B" in o.text)
    assert model.new_page == 1 and "7" not in model.text
    assert any(o.op == "=" and "frob install" in o.text for o in ops)
    # printed labels i, 1, 2 (guide.pdf's /PageLabels)
    assert c.changed[0].old.pages[0] == "i" and c.changed[0].new.pages[-1] == "2"


def run(*args):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


def _texts(tmp_path, old: list, new: list) -> tuple[Path, Path]:
    a, b = tmp_path / "v1.md", tmp_path / "v2.md"
    a.write_text("\n\n".join(f"# {t}\n\n{x}" for t, x in old), encoding="utf-8")
    b.write_text("\n\n".join(f"# {t}\n\n{x}" for t, x in new), encoding="utf-8")
    return a, b


def test_cli_json_lists_every_pair_in_the_schema(tmp_path):
    changed = list(CONTRACT)
    changed[1] = ("2. Fees", CONTRACT[1][1].replace("30 days", "60 days"))
    a, b = _texts(tmp_path, CONTRACT, changed)
    html = tmp_path / "out.html"
    r = run("compare", a, b, "--json", "--html", html, "--db", tmp_path / "t.db")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data["summary"]) == {"unchanged", "changed", "added", "removed", "moved"}
    assert len(data["pairs"]) == 6 and data["summary"]["unchanged"] == 5
    for p in data["pairs"]:
        assert set(p) == {"status", "old", "new", "inserted", "deleted"}
        assert set(p["old"]) == {"heading", "pages"} and set(p["new"]) == {"heading", "pages"}
        assert isinstance(p["inserted"], list) and isinstance(p["deleted"], list)
    fees = next(p for p in data["pairs"] if p["status"] == "changed")
    assert fees["old"]["heading"] == "2. Fees" and fees["deleted"] == ["30"]
    assert fees["inserted"] == ["60"] and fees["old"]["pages"] == ["1"]
    page = html.read_text(encoding="utf-8")
    assert "<del" in page and ">30</del>" in page and ">60</ins>" in page


def test_cli_same_document_twice_says_no_differences(tmp_path):
    a, _ = _texts(tmp_path, CONTRACT, CONTRACT)
    r = run("compare", a, a, "--db", tmp_path / "t.db")
    assert r.exit_code == 0 and "No differences" in r.output


def test_cli_unrelated_documents_are_named_so_not_a_wall_of_changes(tmp_path):
    r = run("compare", DATA / "summarize" / "GPL-3.txt", DATA / "summarize" / "Apache-2.0.txt",
            "--db", tmp_path / "t.db")
    assert r.exit_code == 0
    assert "These look like different documents" in r.output
    assert "aligned" in r.output and "[-" not in r.output
    assert len(r.output.splitlines()) == 2


def test_cli_encrypted_and_empty_files_say_what_to_do(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    r = run("compare", DATA / "app" / "guide-locked.pdf", DATA / "app" / "guide.pdf",
            "--db", tmp_path / "t.db")
    assert r.exit_code == 1 and "password" in r.output.lower() and "Traceback" not in r.output
    r = run("compare", empty, DATA / "app" / "guide.pdf", "--db", tmp_path / "t.db")
    assert r.exit_code == 1 and "empty" in r.output


def test_the_comparison_is_stored_with_the_session(db):
    from docchat.library.store import SessionStore

    store = SessionStore(db)
    sid = store.create_session()
    old = titled_doc("v1.pdf", CONTRACT, doc_id=1)
    new = titled_doc("v2.pdf", CONTRACT[:5], doc_id=2)
    c = compare(old, new)
    c.extra["questions"] = [{"question": "What was removed?", "answer": "Governing law."}]
    store.put_comparison(sid, 1, 2, c.to_dict())
    again = Comparison.from_dict(store.get_comparison(sid))
    assert again.pairs == c.pairs and again.verdict == c.verdict == "changed"
    assert again.extra["questions"][0]["answer"] == "Governing law."
    assert store.get_comparison(sid, 2, 1) is None
    store.delete_session(sid)
    assert store.get_comparison(sid) is None


def _versions():
    old = titled_doc("v1.pdf", CONTRACT, doc_id=1)
    sections = list(old.sections)
    s = sections[1]
    body = s.blocks[0].text.replace("30 days", "60 days")
    sections[1] = replace(s, blocks=(replace(s.blocks[0], text=body),))
    return old, replace(old, sections=sections, name="v2.pdf", sha256="v2", id=2)


def test_a_question_is_packed_with_the_changes_labelled_by_version():
    old, new = _versions()
    c = compare(old, new)
    backend = RecordingBackend(context_window=4096)
    messages = compare_ask.ask_messages(c, old, new, "How long is the payment term now?",
                                        backend)
    prompt = messages[-1].content
    assert "OLD VERSION (v1.pdf, p. 2)" in prompt and "NEW VERSION (v2.pdf, p. 2)" in prompt
    assert "within 30 days" in prompt and "within 60 days" in prompt
    assert "Leeds" not in prompt  # an unchanged section is not sent
    answer = "".join(compare_ask.stream(backend, messages))
    assert answer and backend.last.messages[-1].content == prompt


def test_a_question_fits_the_window():
    old = titled_doc("v1.pdf", [(f"{k}. Part", f"Clause {k} text " * 40) for k in range(40)])
    new = titled_doc("v2.pdf", [(f"{k}. Part", f"Clause {k} text " * 39 + "changed")
                                for k in range(40)])
    c = compare(old, new)
    counter = Chars(window=3000)
    messages = compare_ask.ask_messages(c, old, new, "What changed?", counter,
                                        max_new_tokens=200)
    assert counter.count_prompt_tokens(messages) <= 3000 - 200
    assert "Change 1:" in messages[-1].content


def test_summaries_are_checked_against_both_versions():
    old, new = _versions()
    c = compare(old, new)
    backend = RecordingBackend(context_window=4096,
                               reply="The Buyer now pays within 60 days of the invoice date.")
    pieces = []
    done = compare_ask.summarise(c, old, new, backend, on_piece=lambda k, p: pieces.append(k))
    assert len(done["sections"]) == 1 and set(pieces) == {"s0", "overall"}
    check = done["sections"][0]["check"]
    assert check["total"] == 1 and check["statements"][0]["status"] == "supported"
    assert check["statements"][0]["document"] == "v2.pdf"
    wrong = RecordingBackend(context_window=4096,
                             reply="The Buyer now pays within 90 days of the invoice date.")
    bad = compare_ask.summarise(c, old, new, wrong)
    assert bad["check"]["statements"][0]["status"] != "supported"


def test_cli_chinese_files_are_compared_by_words(tmp_path):
    old = [("第一条 付款", "买方应在收到发票后三十日内付款。逾期付款按每月百分之二计息。"),
           ("第二条 交付", "卖方应将货物交付至买方位于上海的仓库。")]
    new = [("第一条 付款", "买方应在收到发票后六十日内付款。逾期付款按每月百分之二计息。"),
           ("第二条 交付", "卖方应将货物交付至买方位于上海的仓库。")]
    a, b = _texts(tmp_path, old, new)
    data = json.loads(run("compare", a, b, "--json", "--db", tmp_path / "t.db").output)
    assert data["summary"]["changed"] == 1 and data["summary"]["unchanged"] == 1
    pay = next(p for p in data["pairs"] if p["status"] == "changed")
    assert pay["deleted"] in (["三十日"], ["三十"]) and pay["inserted"] in (["六十日"], ["六十"])
    text = run("compare", a, b, "--db", tmp_path / "t.db").output
    assert "[-三十" in text and "{+六十" in text and "逾期付款" in text


def _merged_versions():
    """v1 with sections 5 and 6; v2 where ingest read section 6's heading as text (a number
    edit broke the numbering), so one section holds both."""
    old = titled_doc("v1.txt", CONTRACT)
    five, six = CONTRACT[4], CONTRACT[5]
    new = titled_doc("v2.txt", CONTRACT[:4] + [five], extra=())
    last = new.sections[-1]
    blocks = last.blocks + (replace(last.blocks[0], text=six[0]),
                            replace(last.blocks[0], text=six[1]))
    sections = list(new.sections)
    sections[-1] = replace(last, blocks=blocks)
    return old, replace(new, sections=sections)


def test_a_section_that_the_other_version_holds_inside_another_is_not_removed():
    old, new = _merged_versions()
    c = compare(old, new)
    assert c.summary()["removed"] == 0 and c.summary()["added"] == 0
    law = next(p for p in c.pairs if p.old and p.old.heading == "6. Governing law")
    assert law.status == "unchanged" and law.new.heading == "5. Termination"
    end = next(p for p in c.pairs if p.old and p.old.heading == "5. Termination")
    assert end.status == "changed" and end.inserted == ["6."] and end.deleted == []
    back = compare(new, old)  # the other way round: a section split in two
    assert back.summary()["added"] == 0 and back.summary()["removed"] == 0
    assert next(p for p in back.pairs if p.new.heading == "6. Governing law").status \
        == "unchanged"
