"""What a summary file says about its own quality: its title, loops, citation runs, checks.

`python -m bench.summary_check [--json] SUMMARY.md [SUMMARY.md ...]` reads summaries that
`docchat summarize` wrote (before and after a change) and prints, for each: the title line,
the lines said more than once (a loop the model fell into; headings and blank lines aside),
the lines that are only bare reference markers ("[2]", "[3] [4]"), whether a loop was cut
(the meta line's "cut where the model repeated itself"), and the legend of the statement
check ("N of M statements found in the documents") when there is one.
"""
from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

_CITATION_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[\d+(?:\s*[,–-]\s*\d+)*\][\s,;.]*)+$")
_LEGEND = re.compile(r"_?(\d+) of (\d+) statements? found in the documents")
_CUT = re.compile(r"(\d+) steps? cut where the model repeated itself")


def measure(path: Path) -> dict:
    """The figures of one summary file."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    body = [ln.strip() for ln in lines[1:] if ln.strip() and not ln.lstrip().startswith("#")
            and not _CITATION_LINE.match(ln)]
    repeats = {ln: n for ln, n in Counter(body).items() if n > 1 and len(ln) > 20}
    legend = _LEGEND.search(text)
    cut = _CUT.search(text)
    return {"file": path.name, "title": lines[0] if lines else "",
            "repeated_lines": sum(n - 1 for n in repeats.values()),
            "most_repeated": max(repeats.values(), default=1),
            "citation_lines": sum(bool(_CITATION_LINE.match(ln)) for ln in lines),
            "steps_cut": int(cut.group(1)) if cut else 0,
            "found": int(legend.group(1)) if legend else None,
            "statements": int(legend.group(2)) if legend else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(p) for p in args.files]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    for r in rows:
        checked = f"{r['found']} of {r['statements']} found" if r["statements"] else "unchecked"
        print(f"{r['file']}: {r['title']!r}; repeated lines {r['repeated_lines']} (most "
              f"{r['most_repeated']}x); citation-only lines {r['citation_lines']}; steps cut "
              f"{r['steps_cut']}; {checked}")


if __name__ == "__main__":
    main()
