"""Interface strings of the summaries (the page and the chat page's action), EN and ZH.

Kept apart from docchat.ui.i18n (the chat page's strings); ``t`` falls back to it, so the
summaries UI can use the shared keys ("cancel", "upload", "language", ...) too.
"""
from __future__ import annotations

import logging

from docchat.ui import i18n

logger = logging.getLogger(__name__)

STRINGS: dict[str, dict[str, str]] = {
    "s_title": {"en": "Summaries", "zh": "文档摘要"},
    "s_intro": {"en": "Summarise whole documents: each gets a Markdown summary with page "
                      "references, kept for later; unchanged documents are not redone.",
                "zh": "总结整篇文档：每篇得到一份带页码引用的 Markdown 摘要并会保存；"
                      "未改变的文档不会重做。"},
    "s_new": {"en": "New run", "zh": "新建任务"},
    "s_source": {"en": "Documents", "zh": "文档来源"},
    "s_library": {"en": "From the library", "zh": "文档库"},
    "s_upload": {"en": "Upload", "zh": "上传"},
    "s_folder": {"en": "Folder on the server", "zh": "服务器上的文件夹"},
    "s_pick": {"en": "Documents read before", "zh": "之前读取的文档"},
    "s_no_library": {"en": "The library is empty: upload documents instead.",
                     "zh": "文档库为空：请上传文档。"},
    "s_folder_label": {"en": "Folder under {root}", "zh": "{root} 下的文件夹"},
    "s_folder_hint": {"en": "A path relative to the summaries root, e.g. contracts/2024",
                      "zh": "相对于摘要根目录的路径，例如 contracts/2024"},
    "s_folder_outside": {"en": "{path} is outside {root}: only folders under it can be "
                               "summarised.",
                         "zh": "{path} 不在 {root} 之下：只能总结该目录下的文件夹。"},
    "s_folder_missing": {"en": "There is no folder {path} under {root}; check the name.",
                         "zh": "{root} 下没有文件夹 {path}；请检查名称。"},
    "s_folder_empty": {"en": "{path} has no PDF, TXT or Markdown files.",
                       "zh": "{path} 中没有 PDF、TXT 或 Markdown 文件。"},
    "s_lang": {"en": "Summary language", "zh": "摘要语言"},
    "s_lang_auto": {"en": "Each document's own", "zh": "与文档相同"},
    "s_lang_en": {"en": "English", "zh": "英文"},
    "s_lang_zh": {"en": "Chinese", "zh": "中文"},
    "s_max_tokens": {"en": "Longest summary (tokens)", "zh": "摘要最长词元数"},
    "s_password": {"en": "Password for encrypted PDFs (optional)",
                   "zh": "加密 PDF 的密码（可选）"},
    "s_start": {"en": "Summarise", "zh": "开始总结"},
    "s_nothing": {"en": "Choose at least one document first.",
                  "zh": "请先至少选择一个文档。"},
    "s_runs": {"en": "Runs", "zh": "任务"},
    "s_no_runs": {"en": "No run yet in this server.", "zh": "本服务器还没有任务。"},
    "s_progress": {"en": "{done}/{total} documents", "zh": "{done}/{total} 个文档"},
    "s_eta": {"en": "about {v} left", "zh": "预计还需 {v}"},
    "s_eta_unknown": {"en": "time left: measuring…", "zh": "剩余时间：估算中…"},
    "s_elapsed": {"en": "{v} so far", "zh": "已用 {v}"},
    "s_took": {"en": "took {v}", "zh": "用时 {v}"},
    "s_step": {"en": "{step}/{steps} steps done (last: {label})",
               "zh": "已完成 {step}/{steps} 步（最近：{label}）"},
    "s_first_step": {"en": "first step…", "zh": "第一步…"},
    "s_ahead": {"en": "{n} generation(s) ahead in the model's queue",
                "zh": "模型队列中前面还有 {n} 个生成"},
    "s_cancel": {"en": "Cancel run", "zh": "取消任务"},
    "s_state_running": {"en": "running", "zh": "进行中"},
    "s_state_done": {"en": "finished", "zh": "已完成"},
    "s_state_cancelled": {"en": "cancelled", "zh": "已取消"},
    "s_state_error": {"en": "failed", "zh": "失败"},
    "st_pending": {"en": "waiting", "zh": "等待中"},
    "st_running": {"en": "summarising", "zh": "正在总结"},
    "st_done": {"en": "done", "zh": "完成"},
    "st_skipped": {"en": "unchanged: kept", "zh": "未改变：沿用"},
    "st_failed": {"en": "failed", "zh": "失败"},
    "st_cancelled": {"en": "cancelled", "zh": "已取消"},
    "s_cancelled_before": {"en": "Cancelled before it started.", "zh": "开始前已取消。"},
    "s_read": {"en": "Read", "zh": "阅读"},
    "s_collection": {"en": "Summaries folder", "zh": "摘要文件夹"},
    "s_none": {"en": "No summaries yet: start a run above.",
               "zh": "还没有摘要：请在上方开始任务。"},
    "s_download": {"en": "Download Markdown", "zh": "下载 Markdown"},
    "s_download_all": {"en": "Download all (zip)", "zh": "全部下载（zip）"},
    "s_overview": {"en": "Overview (index.md)", "zh": "总览（index.md）"},
    "s_run_title_library": {"en": "{n} document(s)", "zh": "{n} 个文档"},
    "s_chat_link": {"en": "Chat about your documents", "zh": "就文档提问"},
    # The chat page's documents panel.
    "s_summarize": {"en": "Summarize", "zh": "总结"},
    "s_summary_of": {"en": "Summary of {name}", "zh": "{name} 的摘要"},
    "s_summarizing": {"en": "Summarising {name}…", "zh": "正在总结 {name}…"},
    "s_ask_turn": {"en": "Summarize {name}.", "zh": "请总结《{name}》。"},
    "s_stop": {"en": "Stop", "zh": "停止"},
    "s_open_page": {"en": "Open a cited page", "zh": "打开引用的页面"},
}


def t(key: str, language: str = "en", **values) -> str:
    """The string key in language (a summaries string, else the chat page's)."""
    if key not in STRINGS:
        return i18n.t(key, language, **values)
    return i18n.translate(STRINGS, key, language, **values)


def duration(seconds: float | None) -> str:
    """Seconds for display: "42 s", "3 min 5 s", "1 h 2 min"; "–" when unknown."""
    if seconds is None:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"
