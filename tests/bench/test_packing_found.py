"""bench/packing.py's evidence check: an evidence string copied from a Markdown heading line
("## Install") names the heading, whichever form the context shows it in."""
from bench import packing as bp


def test_a_heading_marker_is_not_compared():
    outline = "- readme.md\n  Overview 概述 [p. 1]\n  Install 安裝 [p. 1]"
    assert bp.found(["## Overview 概述", "### Install 安裝"], outline)
    assert bp.found(["## Install 安裝"], "## Install 安裝\nrun it")  # a raw chunk as written


def test_the_rest_of_the_string_still_must_be_there():
    assert not bp.found(["## Build 編譯"], "Overview 概述\nInstall 安裝")
    # A '#' inside the string is text, not a marker.
    assert not bp.found(["lines starting with '#' are comments"],
                        "lines starting with '' are comments")
    assert bp.found(["lines starting with '#' are comments"],
                    "Lines starting with '#' are   comments.")
