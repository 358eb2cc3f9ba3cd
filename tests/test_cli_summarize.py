"""`python -m docchat summarize`: exit codes, --json, resume, --force, the real default backend."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import Interrupting, RecordingBackend

from docchat.cli.summarize import summarize_command
from docchat.config import Settings
from docchat.library.store import SessionStore

DATA = Path(__file__).parent / "data" / "summarize"


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("Apache-2.0.txt", "BSD.txt", "invalid.pdf", "lppl.pdf"):
        shutil.copy(DATA / name, root / name)
    return root


class Built(list):
    """Backends the command built, oldest first; set .next to choose the next one."""
    next = None


@pytest.fixture
def backends(monkeypatch) -> Built:
    built = Built()

    def fake_get_backend(name, **options):
        backend, built.next = built.next or RecordingBackend(), None
        built.append(backend)
        return backend

    monkeypatch.setattr("docchat.backends.get_backend", fake_get_backend)
    return built


def invoke(*args: str):
    return CliRunner().invoke(summarize_command, list(args), catch_exceptions=False)


def test_help():
    result = invoke("--help")
    assert result.exit_code == 0
    for option in ("--out", "--glob", "--backend", "--concurrency", "--lang", "--force",
                   "--json", "--db", "--model", "--base-url", "--max-tokens"):
        assert option in result.output


def test_a_bad_file_exits_1_and_the_others_are_done(folder, backends, tmp_path):
    out = tmp_path / "out"
    result = invoke(str(folder), "--out", str(out), "--json")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [Path(r["path"]).name for r in lines] == ["Apache-2.0.txt", "BSD.txt",
                                                     "invalid.pdf", "lppl.pdf"]
    assert [r["status"] for r in lines] == ["done", "done", "failed", "done"]
    for r in lines:
        assert set(r) == {"path", "status", "pages", "tokens_in", "tokens_out", "seconds",
                          "output", "error"}
        if r["status"] == "done":
            assert Path(r["output"]).is_file() and r["tokens_in"] > 0 and r["error"] is None
    assert "not a readable PDF" in lines[2]["error"]
    assert (out / "index.md").is_file()


def test_text_output_and_default_out_dir(folder, backends):
    result = invoke(str(folder), "--glob", "*.txt")
    assert result.exit_code == 0
    out = Settings.from_env().summaries_dir
    assert len(list(out.glob("*.md"))) == 3  # two summaries and the index
    assert "done     " in result.stdout and "2 done, 0 skipped, 0 failed" in result.stderr


def test_interrupt_then_resume_then_force(folder, backends, tmp_path):
    out = tmp_path / "out"
    backends.next = Interrupting(at=1)  # Ctrl-C during the second document
    result = invoke(str(folder), "--out", str(out))
    assert result.exit_code == 130 and "run the same command again" in result.stderr
    assert len(backends[-1].requests) == 1  # the second document never got going

    result = invoke(str(folder), "--out", str(out), "--json")
    statuses = [json.loads(line)["status"] for line in result.stdout.splitlines()]
    assert statuses == ["skipped", "done", "failed", "done"] and result.exit_code == 1
    assert len(backends[-1].requests) == 2  # only the two unfinished documents

    result = invoke(str(folder), "--out", str(out), "--json", "--force")
    assert len(backends[-1].requests) == 3
    store = SessionStore.open(Settings.from_env().db)
    assert store.db["summaries"].count == 3


def test_usage_errors_exit_2(tmp_path, backends):
    assert invoke(str(tmp_path / "missing")).exit_code == 2
    (tmp_path / "empty").mkdir()
    result = invoke(str(tmp_path / "empty"))
    assert result.exit_code == 2 and "No supported files" in result.output
    assert invoke(str(tmp_path / "empty"), "--lang", "fr").exit_code == 2


def test_the_default_llamacpp_backend_end_to_end(tmp_path, monkeypatch):
    """The real bundled SmolLM2 GGUF through llama.cpp on a short real document."""
    monkeypatch.delenv("DOCCHAT_BACKEND", raising=False)
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(DATA / "BSD.txt", folder / "BSD.txt")
    out = tmp_path / "out"
    result = invoke(str(folder), "--out", str(out), "--max-tokens", "64", "--json")
    assert result.exit_code == 0, result.output
    [line] = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["status"] == "done" and 0 < line["tokens_out"] <= 64
    text = Path(line["output"]).read_text()
    assert text.startswith("# Summary:") and "llamacpp: SmolLM2" in text
    body = text.split("_\n\n", 1)[1].strip()
    assert body  # the model wrote something
    store = SessionStore.open(Settings.from_env().db)
    [row] = list(store.db["summaries"].rows)
    assert json.loads(row["meta"])["backend"] == "llamacpp" and row["markdown"] == text
    again = invoke(str(folder), "--out", str(out), "--max-tokens", "64", "--json")
    assert json.loads(again.stdout)["status"] == "skipped"
