from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from docchat.cli import cli
from docchat.library.store import SessionStore


def run(*args):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


def lines_json(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_help_everywhere():
    for args in ([], ["ingest"], ["ask"], ["pack"], ["summarize"]):
        r = run(*args, "--help")
        assert r.exit_code == 0 and "Usage" in r.output


def test_ingest_folder_json_bad_file_does_not_stop_the_rest(tmp_path, data_dir):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("headers.pdf", "invalid.pdf", "form_dd0293.pdf"):
        shutil.copy(data_dir / name, folder / name)
    (folder / "notes.md").write_text("# Title\n\nSome text about backups.\n", encoding="utf-8")
    (folder / "ignored.docx").write_bytes(b"PK")
    db = tmp_path / "t.db"
    r = run("ingest", folder, "--db", db, "--json")
    assert r.exit_code == 1
    rows = {row["path"].rsplit("/", 1)[-1]: row for row in lines_json(r.output)}
    assert set(rows) == {"headers.pdf", "invalid.pdf", "form_dd0293.pdf", "notes.md"}
    good = rows["headers.pdf"]
    for key in ("path", "sha256", "pages", "tokens", "tokenizer", "sections", "seconds", "error"):
        assert key in good
    assert good["error"] is None and good["pages"] == 6 and good["tokenizer"] == "cl100k_base"
    assert rows["form_dd0293.pdf"]["error"] is None  # empty user password opens
    assert rows["invalid.pdf"]["error"] and "Traceback" not in r.output
    store = SessionStore.open(db)
    assert store.db["documents"].count == 3


def test_same_file_twice_is_ingested_once(tmp_path, data_dir):
    db = tmp_path / "t.db"
    first = lines_json(run("ingest", data_dir / "headers.pdf", "--db", db, "--json").output)[0]
    copy = tmp_path / "renamed.pdf"
    shutil.copy(data_dir / "headers.pdf", copy)
    second = lines_json(run("ingest", copy, "--db", db, "--json").output)[0]
    assert second["reused"] and second["doc_id"] == first["doc_id"]
    assert second["sha256"] == first["sha256"]
    assert SessionStore.open(db).db["documents"].count == 1


def test_ingest_text_shows_page_markers(tmp_path, data_dir):
    r = run("ingest", data_dir / "headers.pdf", "--db", tmp_path / "t.db", "--text")
    assert r.exit_code == 0
    assert "[p. " in r.output and "6 pages" in r.output


def test_exit_codes_for_bad_file_and_usage(tmp_path, data_dir):
    r = run("ingest", data_dir / "invalid.pdf", "--db", tmp_path / "t.db")
    assert r.exit_code == 1 and "error:" in r.output
    assert run("ingest", "--db", tmp_path / "t.db").exit_code == 2  # no paths
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("ingest", empty, "--db", tmp_path / "t.db").exit_code == 2


def test_encrypted_pdf_with_password(tmp_path, data_dir):
    db = tmp_path / "t.db"
    no_pw = lines_json(run("ingest", data_dir / "graph-encrypted.pdf", "--db", db,
                           "--json").output)[0]
    assert "password" in no_pw["error"].lower()
    with_pw = lines_json(run("ingest", data_dir / "graph-encrypted.pdf", "--db", db,
                             "--password", "user", "--json").output)[0]
    # It opens; its only page is an image (a chart), read by OCR.
    assert with_pw["error"] is None and with_pw["pages"] == 1


def test_ask_json_with_echo_backend(tmp_path, data_dir):
    r = run("ask", data_dir / "headers.pdf", "-q", "What does every gadget have?",
            "--backend", "echo", "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    out = lines_json(r.output)[-1]
    for key in ("answer", "backend", "model", "prompt_tokens", "completion_tokens", "ttft_ms",
                "decode_tokens_per_s", "stopped", "metrics"):
        assert key in out
    assert out["answer"].startswith("Echo: What does every gadget have?")
    assert out["backend"] == "echo" and out["stopped"] is False
    assert out["completion_tokens"] == len(out["answer"].split())
    assert set(out["metrics"]["model"]) >= {"ttft_ms", "itl_ms_p95", "tokens_per_s"}
    assert all(name == "headers.pdf" for name, _ in out["pages"])


def test_ask_says_what_it_waits_for_on_stderr(tmp_path, data_dir):
    r = run("ask", data_dir / "headers.pdf", "-q", "Hello there", "--backend", "echo",
            "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    said = r.stderr.splitlines()
    assert said[:2] == ["Loading the echo backend...", "Reading the documents..."] or \
        said[0] == "Loading the echo backend..."
    assert any(line.startswith("Loading the echo backend: ") and line.endswith(" s")
               for line in said)
    assert any(line.startswith("Reading the documents: ") for line in said)
    assert "Reading the documents" not in r.stdout  # stdout stays the JSON alone
    json.loads(r.stdout)


def test_waiting_ticks_on_a_terminal_and_says_the_time_at_the_end():
    import io
    import time

    from docchat.cli.common import waiting

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    with waiting("Loading the model", every=0.05, out=out):
        time.sleep(0.2)
    text = out.getvalue()
    assert text.startswith("Loading the model...") and "\rLoading the model... 0 s" in text
    assert text.endswith(" s\n") and "\rLoading the model: 0." in text


def test_ask_streams_text(tmp_path, data_dir):
    r = run("ask", data_dir / "headers.pdf", "-q", "Hello there", "--backend", "echo",
            "--db", tmp_path / "t.db", "--preset", "quick")
    assert r.exit_code == 0 and "Echo: Hello there" in r.output


def test_ask_dead_server_is_one_clear_line(tmp_path, data_dir):
    r = run("ask", data_dir / "headers.pdf", "-q", "Hi", "--backend", "openai",
            "--base-url", "http://127.0.0.1:9/v1", "--db", tmp_path / "t.db")
    assert r.exit_code == 1
    assert "127.0.0.1:9" in r.output and "Traceback" not in r.output


def test_pack_json_respects_budget_and_follow_up(tmp_path):
    doc = tmp_path / "指南.md"
    doc.write_text(
        "# 第一章 备份\n\n备份数据库有两种方法。第一种方法是使用 dump 命令导出。\n\n"
        "# 第二章 恢复\n\n第二种方法是复制数据文件，然后用 restore 命令恢复。\n\n"
        + "".join(f"# 第{i}章 其他\n\n" + "无关 的 内容。 " * 80 + "\n\n" for i in range(3, 12)),
        encoding="utf-8")
    hist = tmp_path / "h.json"
    hist.write_text(json.dumps([{"role": "user", "content": "备份数据库有哪些方法？"},
                                {"role": "assistant", "content": "有两种方法 [p. 1]。"}],
                               ensure_ascii=False), encoding="utf-8")
    r = run("pack", doc, "-q", "那第二种方法呢？", "--budget", "700", "--history", hist,
            "--backend", "echo", "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    out = lines_json(r.output)[0]
    assert out["tokens"] <= out["budget"] == 700
    assert not out["whole"] and out["tokenizer"]
    assert "restore" in out["text"] and "[p. " in out["text"]
    assert out["pages"] and out["pages"][0][0] == "指南.md"


def test_ask_bad_history_file_is_usage_error(tmp_path, data_dir):
    hist = tmp_path / "h.json"
    hist.write_text('{"not": "a list"}', encoding="utf-8")
    r = run("ask", data_dir / "headers.pdf", "-q", "Hi", "--backend", "echo",
            "--history", hist, "--db", tmp_path / "t.db")
    assert r.exit_code == 2 and "--history" in r.output


STATEMENT_KEYS = {"text", "status", "document", "page", "label", "span", "score"}


def test_verify_text_file_json_and_table(tmp_path):
    doc = tmp_path / "lease.txt"
    doc.write_text("Lease terms\n\nThe tenant must pay the rent within 30 days of the invoice. "
                   "The landlord repairs the heating within 5 working days.\n", encoding="utf-8")
    answer = tmp_path / "answer.txt"
    answer.write_text("The tenant must pay the rent within 30 days of the invoice. The landlord "
                      "repairs the heating within 9 working days. I hope this helps.",
                      encoding="utf-8")
    args = ("verify", doc, "-q", "When is the rent due?", "--answer-file", answer,
            "--db", tmp_path / "t.db")
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    out = lines_json(r.output)[-1]
    assert (out["supported"], out["total"]) == (1, 2)
    assert all(STATEMENT_KEYS <= set(s) for s in out["statements"])
    assert [s["status"] for s in out["statements"]] == ["supported", "not_found", "exempt"]
    first = out["statements"][0]
    assert first["document"] == "lease.txt" and first["page"] is None and first["label"] is None
    text = doc.read_text(encoding="utf-8")
    assert text[first["span"][0]:first["span"][1]].startswith("The tenant must pay")
    table = run(*args)
    assert table.exit_code == 0 and "1 of 2 statements found in the documents" in table.output
    assert "9 not in the passage" in table.output


def test_verify_pdf_gives_page_and_flags_wrong_citation(tmp_path, data_dir):
    answer = tmp_path / "answer.md"
    answer.write_text("- Bold math symbols may be achieved using the bm package and the \\bm{#1} "
                      "command it supplies [p. 1].\n- Bold math symbols need the Zorblat "
                      "package.\n", encoding="utf-8")
    r = run("verify", data_dir / "apssamp.pdf", "-q", "How do I typeset bold math symbols?",
            "--answer-file", answer, "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    first, second = lines_json(r.output)[-1]["statements"]
    assert first["status"] == "supported" and (first["page"], first["label"]) == (3, "3")
    assert first["cited"] == ["1"] and first["citation"] == "wrong"
    assert second["status"] == "not_found" and "zorblat" in second["reason"]


def test_verify_empty_answer(tmp_path, data_dir):
    answer = tmp_path / "empty.txt"
    answer.write_text("", encoding="utf-8")
    r = run("verify", data_dir / "linn.txt", "-q", "How many tracks?", "--answer-file", answer,
            "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0
    assert lines_json(r.output)[-1] == {"statements": [], "supported": 0, "total": 0,
                                        "partly": 0, "tokens": lines_json(r.output)[-1]["tokens"]}


def test_ask_json_checks_and_pack_json_evidence(tmp_path, data_dir):
    r = run("ask", data_dir / "linn.txt", "-q", "How many tracks does each sequence contain?",
            "--backend", "echo", "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    checks = lines_json(r.output)[-1]["checks"]
    assert set(checks) >= {"statements", "supported", "total"}
    assert all(STATEMENT_KEYS <= set(s) for s in checks["statements"])
    r = run("pack", data_dir / "apssamp.pdf", "-q", "How do I typeset bold math symbols?",
            "--backend", "echo", "--budget", "3000", "--db", tmp_path / "t.db", "--json")
    assert r.exit_code == 0, r.output
    evidence = lines_json(r.output)[-1]["evidence"]
    assert evidence and all({"text", "document", "page", "label"} <= set(e) for e in evidence)
    assert evidence[0]["text"].startswith("Bold math symbols may be achieved")
    assert (evidence[0]["document"], evidence[0]["page"], evidence[0]["label"]) == (
        "apssamp.pdf", 3, "3")
