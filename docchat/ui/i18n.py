"""Interface strings in English and Simplified Chinese."""
from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "简体中文"}

STRINGS: dict[str, dict[str, str]] = {
    "title": {"en": "docchat", "zh": "docchat 文档问答"},
    "language": {"en": "Language", "zh": "语言"},
    "sessions": {"en": "Sessions", "zh": "会话"},
    "new_session": {"en": "New session", "zh": "新会话"},
    "untitled": {"en": "Untitled", "zh": "未命名"},
    "this_session": {"en": "This session", "zh": "当前会话"},
    "rename": {"en": "Title", "zh": "标题"},
    "save_title": {"en": "Rename", "zh": "重命名"},
    "export": {"en": "Export as Markdown", "zh": "导出为 Markdown"},
    "compare_link": {"en": "Compare two versions", "zh": "比较两个版本"},
    "delete": {"en": "Delete session", "zh": "删除会话"},
    "confirm_delete": {"en": "Delete this session and its answers? This cannot be undone.",
                       "zh": "删除此会话及其全部回答？此操作无法撤销。"},
    "yes_delete": {"en": "Yes, delete", "zh": "确认删除"},
    "cancel": {"en": "Cancel", "zh": "取消"},
    "missing_session": {"en": "That session no longer exists; a new one was started.",
                        "zh": "该会话已不存在，已开始新会话。"},
    "preset": {"en": "Answer style", "zh": "回答风格"},
    "adjust": {"en": "Adjust every value", "zh": "调整各项参数"},
    "backend": {"en": "Backend", "zh": "后端"},
    "backend_info": {"en": "**{name}** · {model}\n\nWindow {window:,} tokens · {device}",
                     "zh": "**{name}** · {model}\n\n上下文窗口 {window:,} 个词元 · {device}"},
    "loading_model": {"en": "Loading the model…", "zh": "正在加载模型…"},
    "documents": {"en": "Documents", "zh": "文档"},
    "upload": {"en": "Add PDF, TXT or Markdown files", "zh": "添加 PDF、TXT 或 Markdown 文件"},
    "adding": {"en": "{n} being added", "zh": "正在添加 {n} 个"},
    "reading": {"en": "Reading {name}…", "zh": "正在读取 {name}…"},
    "ocr_status": {"en": "Reading the scanned pages of {name} by OCR…",
                   "zh": "正在用 OCR 识别 {name} 的扫描页…"},
    "ocr_pages": {"en": "OCR: {done} of {total} pages", "zh": "OCR：第 {done} / {total} 页"},
    "ocr_eta": {"en": ", ~{s} s left", "zh": "，约剩 {s} 秒"},
    "ocr_page": {"en": "read by OCR: check the scan", "zh": "由 OCR 识别，请核对原扫描件"},
    "doc_line": {"en": "{name}: {pages} pages, {tokens:,} tokens, {fit}",
                 "zh": "{name}：{pages} 页，{tokens:,} 个词元，{fit}"},
    "fits": {"en": "fits the model's window whole", "zh": "可整篇放入模型窗口"},
    "packed": {"en": "too long for the window: the relevant parts will be packed",
               "zh": "超出窗口：将选取相关部分"},
    "reused": {"en": "(read before)", "zh": "（之前已读取）"},
    "password_for": {"en": "{name} is encrypted: enter its password",
                     "zh": "{name} 已加密：请输入密码"},
    "open": {"en": "Open", "zh": "打开"},
    "earlier": {"en": "Add documents read before", "zh": "添加之前读取的文档"},
    "attach": {"en": "Add to session", "zh": "加入会话"},
    "remove": {"en": "Remove", "zh": "移除"},
    "no_documents": {"en": "Add a document above, then ask a question about it.",
                     "zh": "请先在上方添加文档，然后提问。"},
    "ask": {"en": "Ask about your documents", "zh": "就文档提问"},
    "attach_first": {"en": "Add a document first: upload one or pick one read before.",
                     "zh": "请先添加文档：上传文件或选择之前读取的文档。"},
    "busy": {"en": "An answer is still being written; wait for it or press Stop.",
             "zh": "仍在生成回答；请等待或点击停止。"},
    "stop": {"en": "Stop", "zh": "停止"},
    "stopped": {"en": "Stopped", "zh": "已停止"},
    "interrupted": {"en": "Interrupted: the server stopped while this answer was written.",
                    "zh": "已中断：生成此回答时服务器停止了。"},
    "elsewhere": {"en": "Being written (following it live)…", "zh": "正在生成（实时跟随）…"},
    "waiting": {"en": "Waiting for the model…", "zh": "等待模型…"},
    "ahead": {"en": "{n} answer(s) ahead of yours…", "zh": "前面还有 {n} 个回答…"},
    "sources": {"en": "Sources", "zh": "出处"},
    "page_missing": {"en": "This page is not in the document.", "zh": "文档中没有这一页。"},
    "generic_error": {"en": "Something went wrong; try again. The details are in the server log.",
                      "zh": "出错了，请重试。详细信息见服务器日志。"},
    "m_ttft": {"en": "first token {v}", "zh": "首个词元 {v}"},
    "m_shown": {"en": "shown {v}", "zh": "显示 {v}"},
    "m_rate": {"en": "{v} tokens/s", "zh": "{v} 词元/秒"},
    "m_itl": {"en": "between tokens {mean} (p95 {p95})", "zh": "词元间隔 {mean}（p95 {p95}）"},
    "m_tokens": {"en": "{inp:,} tokens in, {out:,} out", "zh": "输入 {inp:,} 词元，输出 {out:,}"},
    "m_queue": {"en": "waited {v}", "zh": "排队 {v}"},
    "m_reused": {"en": "{n:,} reused", "zh": "复用 {n:,}"},
    "m_prefill": {"en": "read in {v}", "zh": "读取用时 {v}"},
    "m_budget": {"en": "budget {n:,} tokens ({target:g} s at {rate:.0f} tokens/s)",
                 "zh": "预算 {n:,} 词元（{target:g} 秒 × {rate:.0f} 词元/秒）"},
    "m_whole": {"en": "whole window", "zh": "整个窗口"},
    "m_cut": {"en": "{n} excerpts left out to answer on time",
              "zh": "为按时回答，略去 {n} 段摘录"},
    "p_reading": {"en": "Reading {total:,} tokens of context: {done:,} done",
                  "zh": "正在读取 {total:,} 个词元的上下文：已读 {done:,}"},
    "p_left": {"en": "~{v} left", "zh": "约剩 {v}"},
    "p_reused": {"en": "{n:,} already read before", "zh": "{n:,} 个此前已读"},
    "p_writing": {"en": "Read {total:,} tokens of context; writing the answer…",
                  "zh": "已读完 {total:,} 个词元的上下文，正在写回答…"},
    "p_unknown": {"en": "The server is reading the context (it does not report its progress)…",
                  "zh": "服务器正在读取上下文（它不报告进度）…"},
    "p_unknown_n": {"en": "The server is reading {total:,} tokens of context (it does not "
                          "report how far it is)…",
                    "zh": "服务器正在读取 {total:,} 个词元的上下文（它不报告进度）…"},
    "evidence": {"en": "Passages that match your question", "zh": "与问题相关的段落"},
    "evidence_none": {"en": "No passage matches the question's words; the model reads the "
                            "outline and the sections chosen.",
                      "zh": "没有段落与问题的词语相符；模型将阅读目录和选取的章节。"},
    "mk_not_found": {"en": "Not found in the documents", "zh": "文档中未找到"},
    "mk_partly": {"en": "Found in part: check the page", "zh": "部分找到：请核对该页"},
    "mk_found": {"en": "Found on p. {page}", "zh": "见第 {page} 页"},
    "mk_found_text": {"en": "Found in the document", "zh": "在文档中找到"},
    "mk_corrected": {"en": "The model cited p. {cited}, which does not say this",
                     "zh": "模型引用了第 {cited} 页，但该页没有这一内容"},
    "mk_unsupported_citation": {"en": "The cited page does not say this",
                                "zh": "所引页面没有这一内容"},
    "mk_summary": {"en": "{n} of {total} statements found in the documents",
                   "zh": "{total} 句中有 {n} 句在文档中找到"},
    "mk_summary_partly": {"en": " ({n} more in part)", "zh": "（另有 {n} 句部分找到）"},
    "mk_legend": {"en": "dimmed: not found in the documents; dotted: found in part; "
                        "p. N: open the page",
                  "zh": "变淡：文档中未找到；虚线：部分找到；第 N 页：打开该页"},
    "mk_legend_conflict": {"en": "; red, struck through: contradicts the document",
                           "zh": "；红色删除线：与文档矛盾"},
    "mk_conflict": {"en": "Contradicts the document (p. {page}): the document says “{says}”",
                    "zh": "与文档矛盾（第 {page} 页）：文档写的是“{says}”"},
    "mk_conflict_text": {"en": "Contradicts the document ({doc}): it says “{says}”",
                         "zh": "与文档矛盾（{doc}）：文档写的是“{says}”"},
    "mk_summary_conflict": {"en": "; {n} contradicts them", "zh": "；{n} 句与文档矛盾"},
    "mk_summary_conflicts": {"en": "; {n} contradict them", "zh": "；{n} 句与文档矛盾"},
    "mk_live": {"en": "checked so far", "zh": "已核对部分"},
    "mk_echo": {"en": "The model could not answer in {lang}: it only repeated the "
                      "instruction it was given (“{echo}”). The passages that match your "
                      "question are below; a larger model (DOCCHAT_MODEL) or a server "
                      "(DOCCHAT_BACKEND=openai) can answer.",
                "zh": "模型无法用{lang}回答：它只是重复了给它的指令（“{echo}”）。下面是与问题"
                      "相关的段落；更大的模型（DOCCHAT_MODEL）或服务器（DOCCHAT_BACKEND=openai）"
                      "可以回答。"},
    "mk_repeat": {"en": "The model did not answer this question: it only repeated its previous "
                        "answer (“{echo}”). The passages that match your question are below; a "
                        "larger model (DOCCHAT_MODEL) or a server (DOCCHAT_BACKEND=openai) can "
                        "answer.",
                  "zh": "模型没有回答这个问题：它只是重复了上一轮的回答（“{echo}”）。下面是与问题"
                        "相关的段落；更大的模型（DOCCHAT_MODEL）或服务器（DOCCHAT_BACKEND=openai）"
                        "可以回答。"},
    "mk_language_evidence": {"en": " The passages that match your question are shown below.",
                             "zh": "与问题相关的段落显示在下方。"},
    "lang_zh": {"en": "Chinese", "zh": "中文"},
    "lang_en": {"en": "English", "zh": "英文"},
    "mk_repetition": {"en": "The answer was cut: it repeated itself.",
                      "zh": "回答已截断：模型在重复同样的内容。"},
    "mk_language": {"en": "The model did not answer in the question's language: it cannot "
                          "write that language well. A larger model (DOCCHAT_MODEL) or a "
                          "server (DOCCHAT_BACKEND=openai) will.",
                    "zh": "模型没有用提问的语言回答：它写不好这种语言。请换用更大的模型"
                          "（DOCCHAT_MODEL）或服务器（DOCCHAT_BACKEND=openai）。"},
    "pv_title": {"en": "{doc} · p. {page}", "zh": "{doc} · 第 {page} 页"},
    "pv_exact": {"en": "Highlighted: the supporting sentence, at its characters on the page.",
                 "zh": "高亮处：页面上支持该句的原文。"},
    "pv_ocr": {"en": "This page was read by OCR: highlighted at the words tesseract reads "
                     "there; check the scan.",
               "zh": "此页由 OCR 识别：高亮处为 tesseract 识别出的词，请核对原扫描件。"},
    "pv_approx": {"en": "The highlight is approximate (the band where the passage is in the "
                        "page's text): the passage's words were not found on the image.",
                  "zh": "高亮位置为近似（该段在页面文字中的大致位置）：图像上未找到该段的词。"},
    "pv_not_on_page": {"en": "The passage could not be placed on the page image; it is "
                             "highlighted in the page's text below.",
                       "zh": "无法在页面图像上定位该段落；已在下方的页面文字中高亮。"},
    "pv_no_file": {"en": "The original file is no longer in the data folder: the page's text "
                         "is shown instead.",
                   "zh": "数据目录中已没有原文件：改为显示该页文字。"},
    "pv_whole": {"en": "The whole page", "zh": "整页"},
    "pv_text": {"en": "The passage in its context", "zh": "该段落及其上下文"},
    "pv_missing": {"en": "That page link no longer matches an answer of this session.",
                   "zh": "该页面链接已不对应本会话中的回答。"},
    "ttft_target": {"en": "First-token target (seconds)", "zh": "首个词元目标（秒）"},
    "ttft_help": {"en": "In-process backends read only as much context as they can in this "
                        "time; 0 always reads the whole window.",
                  "zh": "本地后端只读取在此时间内能读完的上下文；0 表示总是读取整个窗口。"},
    "reading_mode": {"en": "Context to read", "zh": "读取的上下文"},
    "rm_budget": {"en": "As much as the target allows", "zh": "目标时间内能读的部分"},
    "rm_next": {"en": "Whole window, next question only", "zh": "整个窗口（仅下一个问题）"},
    "rm_session": {"en": "Whole window, this session", "zh": "整个窗口（本会话）"},
}


def translate(table: dict, key: str, language: str = "en", **values) -> str:
    """table[key] in language, formatted with values; English where that language is
    missing. The one lookup behind every string table of the interface."""
    entry = table[key]
    text = entry.get(language) or entry["en"]
    return text.format(**values) if values else text


def t(key: str, language: str = "en", **values) -> str:
    """The interface string key in language, formatted with values; English if missing."""
    return translate(STRINGS, key, language, **values)


def ms(value: float | None) -> str:
    """Milliseconds for display: "340 ms", "2.1 s", or "–" when unknown."""
    if value is None:
        return "–"
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.1f} s"


def metrics_line(metrics: dict, language: str = "en") -> str:
    """One line of an answer's metrics: first token, rate, inter-token latency, tokens."""
    model, display = metrics.get("model") or {}, metrics.get("display") or {}
    parts = [t("m_ttft", language, v=ms(model.get("ttft_ms")))]
    if display.get("ttft_ms") is not None:
        parts.append(t("m_shown", language, v=ms(display["ttft_ms"])))
    rate = metrics.get("decode_tokens_per_s") or model.get("tokens_per_s")
    if rate:
        parts.append(t("m_rate", language, v=f"{rate:.1f}"))
    if model.get("itl_ms_mean") is not None:
        parts.append(t("m_itl", language, mean=ms(model["itl_ms_mean"]),
                       p95=ms(model.get("itl_ms_p95"))))
    parts.append(t("m_tokens", language, inp=int(metrics.get("prompt_tokens") or 0),
                   out=int(metrics.get("completion_tokens") or 0)))
    if metrics.get("prompt_reused"):
        parts.append(t("m_reused", language, n=int(metrics["prompt_reused"])))
    if metrics.get("prefill_ms") is not None:
        parts.append(t("m_prefill", language, v=ms(metrics["prefill_ms"])))
    budget = metrics.get("budget") or {}
    if budget.get("prompt_budget"):
        parts.append(t("m_budget", language, n=int(budget["prompt_budget"]),
                       target=float(budget["target_s"]), rate=float(budget["rate"])))
    elif budget:
        parts.append(t("m_whole", language))
    if (metrics.get("cut") or {}).get("passages_dropped"):
        parts.append(t("m_cut", language, n=int(metrics["cut"]["passages_dropped"])))
    if (metrics.get("queue_ms") or 0) >= 50:
        parts.append(t("m_queue", language, v=ms(metrics["queue_ms"])))
    return " · ".join(parts)


def seconds(value: float) -> str:
    """Seconds for a wait: "0.4 s", "12 s", "2 min 5 s"."""
    if value < 10:
        return f"{value:.1f} s"
    if value < 120:
        return f"{value:.0f} s"
    return f"{int(value // 60)} min {int(value % 60)} s"


def progress_line(progress, elapsed: float, language: str = "en") -> str:
    """What the backend is doing before the first token, with a figure that moves.

    progress is a PrefillProgress (or None before the first event); elapsed is the seconds
    since the question, always shown, so the line changes at least every poll.
    """
    clock = f"({seconds(elapsed)})"
    if progress is None:
        return f"{t('waiting', language)} {clock}"
    if not getattr(progress, "known", True):
        if progress.total:
            return f"{t('p_unknown_n', language, total=int(progress.total))} {clock}"
        return f"{t('p_unknown', language)} {clock}"
    total, done = int(progress.total), int(progress.done)
    if total and done >= total:
        return f"{t('p_writing', language, total=total)} {clock}"
    parts = [t("p_reading", language, total=total, done=done)]
    if progress.eta_s is not None:
        parts.append(t("p_left", language, v=seconds(max(0.0, progress.eta_s))))
    if progress.reused:
        parts.append(t("p_reused", language, n=int(progress.reused)))
    return ", ".join(parts) + f" {clock}"


def progress_fraction(progress) -> float | None:
    """Share of the prompt read (0..1), or None when unknown."""
    if progress is None or not getattr(progress, "known", True) or not progress.total:
        return None
    return max(0.0, min(1.0, progress.done / progress.total))


def language() -> str:
    """The interface language picked in this browser session (see init_language)."""
    import streamlit as st  # only the pages call this; the CLI uses t() and the formatters

    return st.session_state.get("lang", "en")


def pick_language(default: str, locale: str | None) -> str:
    """The interface language a browser session starts in: the settings' language where it
    names one ("en", "zh"), else ("auto") the browser's: Chinese for a zh-* locale (zh-CN,
    zh-TW, ...), English for any other or none."""
    if default in LANGUAGES:
        return default
    return "zh" if (locale or "").lower().startswith("zh") else "en"


def init_language(default: str) -> None:
    """Start a browser session in pick_language(default, the browser's locale) before
    anything is drawn; the sidebar's picker (key "lang") changes it."""
    import streamlit as st

    if "lang" not in st.session_state:
        st.session_state["lang"] = pick_language(default, getattr(st.context, "locale", None))


def q(key: str, **values) -> str:
    """An interface string in the browser session's language."""
    return t(key, language(), **values)
