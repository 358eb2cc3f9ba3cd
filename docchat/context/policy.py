"""PackingPolicy: every tuning constant of the packer (docchat/context/packing.py and
selection.py) in one frozen value, each with why it has its value.

Shares are of the evidence budget (the prompt tokens left for excerpts once the system
prompt, the turns and the question are counted) unless they say otherwise. "Tuning half" is
the tuning split of bench/eval/questions.json (bench/eval/tuning.json), "tune2" is
bench/eval/tune2.json: figures measured with bench/packing.py. A passage is *carried* when a
follow-up's prompt repeats it exactly as an earlier turn's prompt had it (the backend's KV
cache holds it).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PackingPolicy:
    # --- the outline ---------------------------------------------------------------------
    # The outline is always sent (whole if it fits, else its top levels); 15% leaves the
    # excerpts most of the budget.
    outline_share: float = 0.15
    # Outline budgets from this many tokens up are rounded down to two significant bits
    # (256, 384, 512, 768, ...): the first-token budget follows a measured prefill rate, and
    # rounding keeps the same outline (the warm prefix) across small changes of the window.
    # Below it, rounding would cost a third of a budget that is already small.
    outline_round_from: int = 64
    # The sub-outline of the chapter asked about, when the full outline did not fit: a
    # fifth, so that excerpts keep most of the budget.
    focus_share: float = 0.2
    # ... and for a question about structure ("which chapter ..., what are its sections?"),
    # this share: the whole outline when it fits in it (a 146-section manual's is about
    # 2k tokens, a quarter of an 8k budget), else the sub-outlines of the best parts. On the
    # five tuning sets' 55 outline questions at 1k / 2k: 0.2 19 / 38, 0.35 29 / 40, 0.5
    # 32 / 42 (4k and 8k alike, 43 and 49); their 263 other questions did not move.
    structure_focus_share: float = 0.5
    # ... in which, after the sub-outlines of the STRUCTURE_PARTS best parts, up to this
    # many further parts (best first) whose whole sub-outlines fit what is left: a large
    # budget shows more candidates for the part asked about instead of leaving its share
    # unused (see bench/README.md, "More parts for structure questions").
    structure_more_parts: int = 5

    # --- sharing the budget between documents --------------------------------------------
    # Half the budget is split evenly between documents, half by their relevance (three best
    # section scores): a weakly matching document still shows its best part.
    doc_floor: float = 0.5

    # --- choosing sections ---------------------------------------------------------------
    # A hit's neighbour sections rank at this share of its score (a section is often
    # continued by the next); on the tuning half 0.4 recalled more than 0.6.
    neighbour: float = 0.4
    # Tokens: below this, a partial section is not worth its header and omission markers.
    min_partial: int = 48
    # Tokens: filling a document stops when less than this is left (no section fits).
    min_room: int = 8
    # A hit too long to go in whole shows its best blocks in at most this share of the
    # evidence budget on the first pass over the hits, so that the hits after it still
    # get in (a 94-token section ranked fifth was left out behind a 69-block option list
    # ranked third); what is left afterwards grows it further. 1.0: no cap. From
    # partial_from tokens of evidence budget up (the 8k budget): on the tuning sets' 4,096
    # questions 3741 -> 3749 at 8k (two-section 399 -> 404); at every budget it cost 61 at
    # 2k (bench/README.md, "... long hits shown in part").
    partial_share: float = 0.25
    partial_from: int = 5000
    # A document none of whose passages matched (no word of the question in it, as "Who
    # wrote them?" in a fortune file) gets its opening, as much as fits, when its first
    # section does not go in whole: before, such a prompt held no excerpt at all. (Not in a
    # conversation whose window shows the document already.)
    opening_when_unmatched: bool = True
    # Filling a document from its start gives up after this many sections that do not fit:
    # past that the remaining room is too small for any, and trying all of a 1,158-page
    # manual's sections costs milliseconds for nothing.
    max_misses: int = 16
    # A question about one part (a chapter and its subsections) gets that part whole when it
    # takes at most this share: more would crowd out the hits elsewhere.
    span_share: float = 0.5
    # ... for every question (True), or only for one that asks about a part as a whole
    # (retrieval.asks_whole; False): another question gets the best passages first.
    part_for_all: bool = True

    # A section or window that is mostly (contents_share of its characters) a printed table
    # of contents or an index (selection.contents_blocks) scores contents_weight of what
    # the search gave it: it repeats every title a question names, so it ranked among the
    # first hits and took the room of the section it points to; the outline gives the
    # structure already. Retired blind sets 6-9 (664 questions) at 2k/4k/8k: 432/518/585
    # found with 1.0, 436/522/587 with 0.2 (bench/README.md, "Contents pages rank low").
    contents_weight: float = 0.2
    contents_share: float = 0.7

    # --- the best windows first (precision) ----------------------------------------------
    # The passage_top best windows by meaning (cosine; of all the documents' windows) have it
    # join their window scores (relevance.py), which rank the windows taken first and the
    # sections. Retired blind sets 6-9, 11, 13, 15, 18-20 (1,754 questions), found at 2k / 4k /
    # 8k with 10: 1114 / 1388 / 1555, 25: 1114 / 1392 / 1564, 50: 1121 / 1388 / 1567 (8k
    # paraphrase 284 -> 289, two-section 167 -> 175), 100: 1119 / 1379 / 1566
    # (bench/README.md, "Passages by meaning past the tenth").
    passage_top: int = 50
    # At most this many of the best-matching windows (runs of blocks of ~600 characters)
    # are taken first, wherever their sections rank, in at most breadth_share of each
    # document's share (the rest goes to whole hits and their neighbours), and only those
    # scoring at least window_floor of the best one (weaker ones would take the place of
    # whole sections). Introduced together (commit 3eb1d0e): tuning half 2k .71 -> .77,
    # 8k .87 -> .94; old set 2k .53 -> .64, 8k .82 -> .85.
    breadth_top: int = 6
    breadth_share: float = 0.5
    window_floor: float = 0.5
    # From meant_from tokens of evidence budget up, up to meant_top more windows follow:
    # the best by meaning alone (cosine) not in yet, in what is left of breadth_share
    # (see bench/README.md, "... windows by meaning at large budgets"). Tuning sets' 866
    # questions: from 5000 (8k) 766 -> 770 at 8k; from 2500 (4k too) 691 -> 697 at 4k, 2k
    # unchanged (its evidence budget is below it).
    meant_top: int = 2
    meant_from: int = 2500
    # From companion_from tokens of evidence budget up, an English question's passages are
    # scored by meaning twice, by MiniLM and by the multilingual companion (its vectors of an
    # English document's windows are computed anyway, for Chinese questions): both scores
    # join the window scores, and both models' best windows are the meant ones. Below, the
    # second reading's windows took the place of better ones. Tuning sets (3,256
    # questions) at 2k / 4k / 8k: MiniLM alone 2086 / 2601 / 2923, both from 2500 up 2086 /
    # 2611 / 2930 (paraphrase 475 -> 481 at 4k, 563 -> 571 at 8k), both at every budget
    # (0) 2079 / 2613 / 2931 (bench/README.md, "Two readings of an English question"); a
    # huge value: never.
    companion_from: int = 2500
    # A follow-up's passages are scored by meaning (from its own words, as a first question's)
    # when it has at least this many search words of its own ("我想知道它为什么会重复构建某个
    # 目标，该用哪个选项？"); an elliptical one ("And the lowercase one?") is not. 0: never.
    # Tuning sets' 417 follow-ups at 2k / 4k / 8k: never 272 / 350 / 388, from 4 words 269 /
    # 345 / 382, from 6 270 / 353 / 386 (bench/README.md, "Contents whose leaders fill").
    followup_dense_terms: int = 0
    # A follow-up's own search words weigh this many times its history's in the blocks of a
    # section that goes in partly (a one-section ChangeLog: "那“快速输入”这个功能又是哪天加进来
    # 的？" after questions on table input methods showed the table-input entries). 1: alike.
    # Tuning sets (4,434 questions) at 2k / 4k / 8k: alike 2902 / 3617 / 4039, 2 2903 / 3618
    # / 4039, 3 2903 / 3617 / 4038 (bench/README.md, "Contents whose leaders fill").
    own_term_weight: float = 1.0
    # The weight of a follow-up's second query (its own words with the recent user turns')
    # in the fused and window scores; its own words' query weighs 1. Tuning sets (4,434
    # questions) at 2k / 4k / 8k: 1 2902 / 3617 / 4039, 0.5 2903 / 3619 / 4037, 0.25 2902 /
    # 3617 / 4035 (bench/README.md, "Contents whose leaders fill").
    history_weight: float = 1.0
    # A follow-up searched with its history: the own_aspect best windows of its own words'
    # query are a part of the question of its own (Relevance.aspects: they come right after
    # the best window), so that the history's words do not crowd out what the question
    # itself asks. The tuning sets' 430 follow-ups at 2k / 4k / 8k: 0 277 / 355 / 398, 1 279 /
    # 355 / 400, 2 278 / 357 / 399 (bench/README.md, "Underlines of tildes").
    own_aspect: int = 1
    # A section that goes in partly shows its best blocks by the question's words and, where
    # the blocks' cosines are known, by meaning: its best block by meaning gains this share
    # of the best word score (selection.with_meaning). Retired blind sets 6-9, 11, 13, 15,
    # 18 and 19 (1,574 questions) at 2k / 4k / 8k: 0 (words alone) 993 / 1249 / 1397,
    # 1.0 1002 / 1249 / 1399 (paraphrase 165 -> 170 at 2k), 3.0 996 / 1252 / 1398
    # (bench/README.md, "Blocks by meaning in a section that goes in partly").
    meaning_block_weight: float = 1.0
    # The windows are taken in the order that covers the question's words
    # (selection.covering): of the cover_pool best, those at least cover_floor of the best
    # one's score, each valued at its score times (cover_base + the share of the words'
    # weight it adds), times same_section when its section has a window already.
    cover_pool: int = 40
    cover_floor: float = 0.5
    cover_base: float = 1.0
    same_section: float = 0.8
    # A question that asks several things: the aspect_top best windows of each of its parts
    # come first (round by round: each part's best, then each part's second, ...), before
    # the rest in covering order. A part's best window is often a near miss (its words in
    # the wrong place). Tuning sets' 1,201 questions, 2k/4k/8k (bench/README.md, "Each part
    # of a question, its three best windows"): 1 -> 3, 731/943/1035 -> 732/944/1038;
    # two-section 49/68/84 -> 51/70/88 of 110, paraphrase 138/197/216 -> 137/195/214 of 255.
    # They come on top of breadth_top, each round with the whole question's next window
    # (before, they took all of its places): retired blind sets 6-9 (664 questions),
    # 436/525/590 -> 436/529/591 (bench/README.md, "Contents pages rank low").
    aspect_top: int = 3
    # A part asked about as a whole that does not go in whole (selection.spread), in
    # spread_share of the budget: its first and last blocks, the first blocks of up to
    # spread_headings of its sections, then the best block of each of spread_segments
    # segments (then twice as many, ...).
    # From spread_from tokens of budget up: below, the best blocks of the best hits found
    # more (tuning sets' 108 section questions at 2k: 0.33 without the spread, 0.21 with it;
    # at 4k 0.63 / 0.62; at 8k 0.78 / 0.79).
    spread_share: float = 0.5
    spread_from: int = 5000
    spread_headings: int = 8
    spread_segments: int = 3
    # The block score that keeps a section's already chosen blocks when it grows: above
    # any BM25 block score, so growing never drops what a window brought in.
    chosen_block_score: float = 1e9

    # --- follow-ups: carrying the previous prompt's passages -----------------------------
    # The previous prompt's sections (previous_sections) are carried whole and first up to
    # this share, so the backend reuses what it read (a follow-up is mostly about the same
    # part) ...
    carry_sections_share: float = 0.5
    # ... but only from this much evidence budget up: on the tuning half's follow-ups it
    # cost one question of ten at 2k and 4k, and gained one at 8k and two at 32k.
    carry_sections_from: int = 5000
    # The previous passages (previous_passages) are carried, exactly, while the follow-up
    # leans on them (below) or its own search still finds them: the window holds its best
    # fused hit, or at least carry_held of its carry_top best. Measured with
    # bench/packing.py --in-session (blind2 + blind3, 315 questions asked second): "one of
    # the 8 best" gave 0.44 / 0.63 / 0.69 at 2k / 4k / 8k, this rule 0.51 / 0.66 / 0.70
    # (bench/README.md), and the follow-ups of bench/responsiveness.py stay follow-ups.
    carry_top: int = 8
    carry_held: int = 3
    # ... or the follow-up has at most this many content words ("and its elements?").
    elliptical_terms: int = 2
    # A follow-up that points back ("那……", "And ...") but has at least this many content
    # words of its own is searched as a first question is (its history's words left out); it
    # still carries the window's passages. 0: never, kept: at 5 the tuning sets' 430
    # follow-ups went from 277 / 355 / 398 to 273 / 346 / 393 at 2k / 4k / 8k.
    standalone_terms: int = 0
    # A section in the window in part grows by a follow-up's best window (its own words) that
    # holds one of its sent blocks too, where a block of that window not sent yet has one of
    # the question's own words (selection.to_grow). False: only a window away from every
    # sent block grows it. The tuning sets' 430 follow-ups at 2k / 4k / 8k: False 279 / 355
    # / 400, True 280 / 360 / 399 (bench/README.md, "Underlines of tildes").
    grow_unsent: bool = True
    # Carried passages take at most this share, so that new passages for the follow-up's
    # own words always have some room.
    carry_share: float = 0.85

    # --- an append-only conversation (docchat/context/turn_packing.py) -------------------
    # The window is compacted when the earlier turns and the question leave fewer tokens
    # than this for the new turn's excerpts (a few blocks' worth) ...
    min_new_evidence: int = 256
    # ... down to this share of the prompt limit, so that the next few turns append again
    # instead of compacting (and reading everything again) on every turn.
    compact_to: float = 0.5

    # --- older turns ---------------------------------------------------------------------
    # The turns before the recent ones take at most this share, shortened: their gist is
    # context, the excerpts are the evidence.
    older_share: float = 0.1
    # Tokens kept of an older user message (its end: where the question is) ...
    older_user_tokens: int = 60
    # ... and of an older answer, at its head and at its tail (each).
    older_answer_tokens: int = 40
    # A message within this many tokens of its cap is left whole: cutting it would save
    # less than the "…" and the broken sentence cost.
    shorten_slack: int = 8

    # --- token arithmetic ----------------------------------------------------------------
    # Tokens of the blank lines around a block of the context (outline, focus).
    block_gap: int = 4
    # Tokens after a document's header line.
    header_gap: int = 2
    # Tokens of the blank line between two passages.
    passage_gap: int = 2
    # Kept free: per-passage counts miss a few tokens where passages join; 1% (at least
    # slack_min tokens) saves re-counting the whole prompt (a second of llama.cpp
    # tokenizing a 32k prompt on a busy machine).
    slack_share: float = 0.01
    slack_min: int = 8
    # Tokens freed beyond an overflow, so that one shrink step usually suffices.
    shrink_margin: int = 4
    # No tokenizer averages more than this many characters per token on real text: a
    # document longer than avail x this cannot go in whole, without counting it.
    max_chars_per_token: int = 8


POLICY = PackingPolicy()
