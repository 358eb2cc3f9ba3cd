"""carry.still_relevant: when a later question in a session is still about the window."""
from __future__ import annotations

from docchat.context.carry import existing_passages, still_relevant
from docchat.context.retrieval import doc_key
from tests.factories import titled_doc

DOC = titled_doc("manual.pdf", [(f"Part {k}", f"Text of part {k} about topic {k}.")
                                for k in range(10)])
KEY = doc_key(DOC, 0)
# The question's fused hits, best first: sections 9, 8, 7, ..., 0.
FUSED = {(KEY, 9 - rank): 10.0 - rank for rank in range(10)}
QUESTION = "How is the calibration of the spindle motor stored?"  # leans on nothing


def window(*indexes: int):
    return existing_passages([DOC], ["manual.pdf"], [("manual.pdf", i, None) for i in indexes])


def test_the_window_holding_the_questions_best_hit_keeps_the_topic():
    assert still_relevant([DOC], FUSED, window(9), QUESTION)


def test_one_lesser_hit_in_the_window_is_a_new_topic():
    # Rank 4 of the 8 best alone: asked second in a session (bench/packing.py --in-session),
    # such questions were taken for follow-ups and given only the follow-up's share.
    assert not still_relevant([DOC], FUSED, window(5), QUESTION)
    assert not still_relevant([DOC], FUSED, window(5, 3), QUESTION)


def test_three_of_the_best_eight_in_the_window_keep_the_topic():
    assert still_relevant([DOC], FUSED, window(6, 4, 2), QUESTION)


def test_nothing_of_the_best_eight_is_a_new_topic_unless_the_question_leans_back():
    assert not still_relevant([DOC], FUSED, window(0), QUESTION)
    assert still_relevant([DOC], FUSED, window(0), "And for it?")
