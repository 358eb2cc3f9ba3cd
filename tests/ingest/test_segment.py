from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import segment
from ingest.segment import index_text, index_texts, terms

ZH = ["数据库备份的方法", "命名管道是一个像管道一样的文件", "你把内容放进了文件，它从另一端出来。"]


def reference_terms(text: str) -> list[str]:
    """terms() as first written: jieba on every run, no cache, no fast paths."""
    out = []
    for m in segment._WORD.finditer(text):
        w = m.group(0)
        if segment._CJK_RUN.fullmatch(w):
            out.extend(p for p in segment._jieba().cut_for_search(w) if p.strip())
        else:
            out.append(w.lower())
    return out


def test_index_text_uses_jieba_search_mode():
    assert index_text("数据库备份") == " ".join(reference_terms("数据库备份"))
    assert "数据" in index_text("数据库备份").split()  # search mode adds sub-words
    assert index_text("Restoring BACKUPS, don’t") == "restoring backups don’t"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab CDİΣς’'_-1.\n数据库备份管道文件，")), max_size=40))
def test_index_text_and_terms_match_reference(text):
    segment.clear_cache()
    assert terms(text) == reference_terms(text)
    assert index_text(text) == " ".join(reference_terms(text))
    assert index_text(text) == " ".join(reference_terms(text))  # cached the second time


def test_index_texts_parallel_equals_serial(monkeypatch):
    texts = [f"{z} section {i} Über" for i, z in enumerate(ZH * 20)] + ["", "plain English only"]
    serial = [index_text(t) for t in texts]
    monkeypatch.setattr(segment, "PARALLEL_MIN_CJK", 1)
    monkeypatch.setenv("DOCCHAT_INGEST_PROCESSES", "2")
    calls = []
    real = segment.run_split
    monkeypatch.setattr(segment, "run_split",
                        lambda fn, jobs: calls.append(len(jobs)) or real(fn, jobs))
    segment.clear_cache()
    assert index_texts(texts) == serial
    assert calls == [2]
    assert index_texts([]) == []


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(segment, "_CACHE_MAX", 2)
    segment.clear_cache()
    for z in ZH:
        terms(z)
    assert len(segment._cut_cache) <= 2
