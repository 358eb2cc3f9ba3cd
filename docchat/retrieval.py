"""Query building and scoring: queries from the question and the conversation, a small
English-Chinese term map for common technical words, an in-memory BM25 that ranks like
the store's FTS5 index (same words, same stemming, same formula), and block scoring
inside one section."""
from __future__ import annotations

import logging
import math
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from ingest.document import Block, Document
from ingest.segment import has_cjk, terms

logger = logging.getLogger(__name__)

# FTS5's bm25() constants and the store's column weights (heading 3.0, body 1.0).
K1, B = 1.2, 0.75
HEADING_WEIGHT, BODY_WEIGHT = 3.0, 1.0


class Hit(Protocol):
    doc_id: object
    section: int
    score: float


SearchFn = Callable[[str], Sequence[Hit]]


@dataclass(frozen=True)
class SectionHit:
    doc_id: object  # Document.id, or the document's position when it has none
    section: int
    score: float


# Question words and function words that carry no topic. Chinese entries are jieba words.
STOPWORDS = frozenset("""
a an the and or of to in on at for from by with about as is are was were be been being do does
did doing have has had it its this that these those there here what which who whom whose when
where why how can could should would will shall may might must i me my we our you your he she
they them their his her not no yes if then than so too very just also any some each every all
both more most other such only own same into over under again further once please tell explain
describe show give list say said one ones thing things way ways use used using get does isn
whats hows wheres
的 了 是 在 和 与 或 及 吗 呢 吧 啊 么 什么 怎么 怎样 如何 哪些 哪个 哪 为什么 为何 是否 可以 能 能否
请 请问 一下 这 那 这个 那个 这些 那些 有 没有 有没有 中 里 上 下 对 把 被 给 让 我 你 他 她 它 我们
你们 他们 要 会 就 都 也 还 又 并 而 及其 以及 其 之 所 等 说 讲 介绍 说明 告诉 关于 一个 一种 使用 用
""".split())

# A general map of common computing words, English <-> Simplified Chinese, used only to
# bridge a question and a document in different languages (jieba words on the left).
_TERM_MAP_SRC = """
安装 install installation|卸载 uninstall remove|升级 upgrade|更新 update|配置 configure configuration config
设置 setting settings setup|文件 file files|目录 directory directories|文件夹 folder|路径 path
文件系统 filesystem|磁盘 disk|分区 partition|挂载 mount|格式化 format|备份 backup|恢复 restore recovery
网络 network networking|接口 interface|地址 address|域名 domain|主机 host hostname|服务器 server
客户端 client|代理 proxy|防火墙 firewall|端口 port|协议 protocol|路由 route routing|无线 wireless wifi
连接 connection connect|下载 download|上传 upload|镜像 mirror image|软件包 package packages|包 package
软件 software|依赖 dependency dependencies depends|版本 version|源 source sources|源代码 source code
编译 compile build|构建 build|脚本 script scripts|命令 command commands|命令行 command line shell
终端 terminal console|用户 user users|组 group groups|权限 permission permissions|密码 password
账户 account|登录 login|认证 authentication|加密 encryption encrypt|签名 signature sign|密钥 key keys
证书 certificate|安全 security secure|漏洞 vulnerability|内核 kernel|模块 module modules|驱动 driver
硬件 hardware|内存 memory|处理器 processor cpu|进程 process processes|线程 thread|服务 service services
守护进程 daemon|启动 boot start startup|关机 shutdown|重启 restart reboot|系统 system|日志 log logs logging
错误 error errors|警告 warning|调试 debug debugging|测试 test testing|性能 performance|时间 time
日期 date|时区 timezone|语言 language|字符 character characters|编码 encoding|字体 font fonts
输入法 input method|键盘 keyboard|鼠标 mouse|显示 display|屏幕 screen|打印 print printing|打印机 printer
声音 sound audio|视频 video|图像 image images|图片 picture image|图形 graphics|桌面 desktop
窗口 window|编辑器 editor|编辑 edit|文本 text|文档 document documentation|手册 manual|帮助 help
变量 variable variables|环境 environment|函数 function functions|参数 argument arguments parameter
选项 option options|返回 return|值 value values|类型 type types|类 class|对象 object|方法 method
属性 attribute property|列表 list|数组 array|字符串 string|表格 table tables|表 table|行 line row
列 column|段落 paragraph|页 page|页面 page|标题 title heading|章节 chapter section|章 chapter|节 section
样式 style|颜色 color colour|大小 size|宽度 width|高度 height|坐标 coordinate coordinates|绘制 draw drawing
画布 canvas|图表 chart|条形码 barcode|链接 link links|压缩 compress compression archive|归档 archive
解压 extract|数据库 database|数据 data|查询 query|搜索 search|索引 index|缓存 cache|队列 queue
邮件 mail email|消息 message messages|通知 notification|任务 task tasks|计划 schedule cron
定时 timer schedule|虚拟 virtual|虚拟机 virtual machine|容器 container|仓库 repository|分支 branch
提交 commit|合并 merge|补丁 patch|许可证 license licence|许可 license permission|版权 copyright
自由 free freedom|开源 open source|发行版 distribution|发布 release|维护者 maintainer|上游 upstream
规范 policy specification|标准 standard|要求 requirement requirements must|必须 must|应该 should
字段 field fields|控制 control|文件名 filename|扩展名 extension|权利 rights|条款 terms clause
作者 author|修改 modify modification change|分发 distribute distribution|保证 warranty
责任 liability|专利 patent patents|商标 trademark|引用 reference cite|示例 example examples
例子 example|教程 tutorial|快捷键 shortcut|剪贴板 clipboard|会话 session|进度 progress
顺序 order|解析 resolution resolve resolver|名称 name|名字 name|自动 automatic automatically
转换 convert conversion converting|远程 remote|移动 removable mobile move|设置 set setting
连接 connecting|语言环境 locale|地区 region locale|口令 password passphrase|画布 canvas
字体 font|检查 check verify|支持 support supported|默认 default|删除 delete remove
复制 copy|同步 synchronization sync|移除 remove|创建 create|生成 generate|运行 run
执行 execute execution|可执行 executable|读取 read|写入 write|打开 open|关闭 close
"""


def _parse_term_map(src: str) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, list[str]] = {}
    for entry in src.replace("\n", "|").split("|"):
        words = entry.split()
        if len(words) < 2:
            continue
        zh, en = words[0], [w.lower() for w in words[1:]]
        zh_en.setdefault(zh, []).extend(en)
        for w in en:
            en_zh.setdefault(w, []).append(zh)
    return ({k: tuple(dict.fromkeys(v)) for k, v in zh_en.items()},
            {k: tuple(dict.fromkeys(v)) for k, v in en_zh.items()})


ZH_EN, EN_ZH = _parse_term_map(_TERM_MAP_SRC)


def content_terms(text: str) -> list[str]:
    """Search terms of text without question words and function words, in order, unique."""
    return list(dict.fromkeys(t for t in terms(text) if t not in STOPWORDS and len(t.strip()) > 0))


def translate_terms(words: Iterable[str]) -> list[str]:
    """Words of the other language for the words the term map knows."""
    out: list[str] = []
    for w in words:
        out.extend(ZH_EN.get(w, ()) or EN_ZH.get(w, ()) or EN_ZH.get(w.rstrip("s"), ()))
    return [t for t in dict.fromkeys(out)]


@dataclass(frozen=True)
class Query:
    """One search: its text for the search function and its weight in the fused score."""
    text: str
    weight: float


def synonyms(words: Iterable[str]) -> list[str]:
    """Same-language alternatives found through the term map (口令 -> password -> 密码)."""
    given = set(words)
    return [w for w in translate_terms(translate_terms(given)) if w not in given]


def build_queries(question: str, history: Sequence = (), documents: Sequence[Document] = (),
                  recent_user_turns: int = 2, rewrite: Callable[[str], str] | None = None,
                  expand: bool = True) -> list[Query]:
    """Queries for a question: its own words, then with the recent user turns, so that a
    follow-up ("and the second one?") still finds its topic; translations are added where
    a document's language differs from the question's, and (at half weight) synonyms
    through the term map. rewrite is an optional hook (e.g. the backend rephrasing)."""
    words = content_terms(question)
    if rewrite is not None:
        words += [w for w in content_terms(rewrite(question)) if w not in words]
    q_zh = has_cjk(question)
    cross = expand and any((d.language == "zh") != q_zh for d in documents)
    if cross:
        words += [w for w in translate_terms(words) if w not in words]
    queries = [Query(" ".join(words), 1.0)] if words else []
    if expand and words:
        extra = synonyms(words)
        if extra:
            queries.append(Query(" ".join(words + extra), 0.5))
    users = [m.content for m in history if getattr(m, "role", "") == "user"][-recent_user_turns:]
    if users:
        context = content_terms(" ".join(users))
        if cross:
            context += translate_terms(context)
        extra = [w for w in dict.fromkeys(context) if w not in words]
        if extra:
            queries.append(Query(" ".join(words + extra), 1.0))
    return queries


def fused_scores(search: SearchFn, queries: Sequence[Query]) -> dict[tuple[object, int], float]:
    """Run each query; add its scores normalised by its best hit, times its weight."""
    fused: dict[tuple[object, int], float] = {}
    for q in queries:
        hits = search(q.text)
        if not hits:
            continue
        top = max(h.score for h in hits) or 1.0
        for h in hits:
            key = (h.doc_id, h.section)
            fused[key] = fused.get(key, 0.0) + q.weight * h.score / top
    return fused


_STEMS: dict[str, tuple[str, ...]] = {}
_TOKENIZER = "porter unicode61 remove_diacritics 2"  # as the store's sections_fts


def index_terms(text: str) -> list[str]:
    """Words of text as the store's FTS5 index sees them: segment.terms, then the index's
    own tokenizer (Porter stemming, diacritics removed), so both rank alike."""
    words = terms(text)
    missing = [w for w in dict.fromkeys(words) if w not in _STEMS]
    if missing:
        _STEMS.update(_fts_tokens(missing))
    return [t for w in words for t in _STEMS[w]]


def _fts_tokens(words: list[str]) -> dict[str, tuple[str, ...]]:
    """Tokens of each word by SQLite's own FTS5 tokenizer (an in-memory database)."""
    if len(_STEMS) > 500_000:
        _STEMS.clear()
    con = sqlite3.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(w, tokenize='{_TOKENIZER}')")
        con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        con.executemany("INSERT INTO t(rowid, w) VALUES (?, ?)", enumerate(words))
        out: dict[str, list[str]] = {w: [] for w in words}
        for row, term in con.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            out[words[row]].append(term)
    finally:
        con.close()
    return {w: tuple(t) for w, t in out.items()}


class _Postings:
    """Term statistics of one document's sections, built once and reused."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.postings: dict[str, list[tuple[int, float]]] = {}
        self.lengths: list[int] = []
        self.indexes: list[int] = []
        for row, s in enumerate(doc.sections):
            head = Counter(index_terms(" ".join(s.heading_path)))
            body = Counter(index_terms(s.text))
            self.lengths.append(sum(head.values()) + sum(body.values()))
            self.indexes.append(s.index)
            for t in head.keys() | body.keys():
                w = HEADING_WEIGHT * head.get(t, 0) + BODY_WEIGHT * body.get(t, 0)
                self.postings.setdefault(t, []).append((row, w))


_CACHE: dict[int, _Postings] = {}
_CACHE_SIZE = 16


def _postings(doc: Document) -> _Postings:
    entry = _CACHE.get(id(doc))
    if entry is None or entry.doc is not doc or len(entry.lengths) != len(doc.sections):
        entry = _Postings(doc)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[id(doc)] = entry
    return entry


class SectionIndex:
    """In-memory BM25 over the sections of documents, ranking as the store's FTS5 does."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.keys = [doc_key(d, i) for i, d in enumerate(documents)]
        self.parts = [_postings(d) for d in documents]

    def search(self, query: str, limit: int = 100) -> list[SectionHit]:
        """Sections matching any word of query, best first (score: higher is better)."""
        words = sorted(set(index_terms(query)))
        n = sum(len(p.lengths) for p in self.parts)
        if not words or not n:
            return []
        avgdl = sum(sum(p.lengths) for p in self.parts) / n
        scores: dict[tuple[int, int], float] = {}
        for w in words:
            lists = [(pi, p.postings.get(w, ())) for pi, p in enumerate(self.parts)]
            df = sum(len(lst) for _, lst in lists)
            if not df:
                continue
            idf = math.log((n - df + 0.5) / (df + 0.5))
            idf = idf if idf > 0 else 1e-6
            for pi, lst in lists:
                lengths = self.parts[pi].lengths
                for row, f in lst:
                    norm = K1 * (1 - B + B * lengths[row] / avgdl)
                    key = (pi, row)
                    scores[key] = scores.get(key, 0.0) + idf * f * (K1 + 1) / (f + norm)
        best = sorted(scores.items(), key=lambda kv: -kv[1])[:limit]
        return [SectionHit(self.keys[pi], self.parts[pi].indexes[row], s) for (pi, row), s in best]

    __call__ = search


def doc_key(doc: Document, position: int) -> object:
    """How hits name a document: its store id, or its position when it has none."""
    return doc.id if doc.id is not None else position


def block_scores(blocks: Sequence[Block], query_terms: Sequence[str]) -> list[float]:
    """Relevance of each block of one section to the query terms (tf-idf within the section)."""
    if not blocks:
        return []
    qset = set(index_terms(" ".join(query_terms)))
    counts = [Counter(t for t in index_terms(b.text) if t in qset) for b in blocks]
    df = Counter(t for c in counts for t in c)
    n = len(blocks)
    idf = {t: math.log(1 + n / d) for t, d in df.items()}
    return [sum(idf[t] * (1 + math.log(f)) for t, f in c.items()) for c in counts]


# Dense scores join the fused BM25 scores for their best DENSE_TOP sections, scaled from 0
# (the DENSE_TOP-th best) to DENSE_WEIGHT (the best): a section that only the embedding
# finds can rank with the lexical hits without the long tail of weak cosines adding noise.
DENSE_WEIGHT = 1.0
DENSE_TOP = 10


def add_dense(fused: dict[tuple[object, int], float], dense: dict[tuple[object, int], float],
              weight: float = DENSE_WEIGHT, top: int = DENSE_TOP
              ) -> dict[tuple[object, int], float]:
    """fused plus weight * the dense scores of the top sections, min-max scaled."""
    if not dense or weight <= 0:
        return fused
    ranked = sorted(dense.values(), reverse=True)
    hi, lo = ranked[0], ranked[min(top, len(ranked) - 1)]
    if hi <= lo:
        return fused
    out = dict(fused)
    for key, v in dense.items():
        if v > lo:
            out[key] = out.get(key, 0.0) + weight * (v - lo) / (hi - lo)
    return out
