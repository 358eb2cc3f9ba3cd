"""No function in docchat/ or ingest/ is over 80 lines (issue 23): a longer one is split into
named steps. Lines are counted from the `def` (decorators included) to the function's last
line, docstring and comments included, as a reader sees it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("docchat", "ingest")
MAX_LINES = 80


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of each function in `source` over max_lines,
    methods and nested functions included."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    length = child.end_lineno - first + 1
                    if length > max_lines:
                        found.append((name, first, length))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_the_walk_finds_a_long_function_and_a_long_method():
    body = "\n".join(f"        x{i} = {i}" for i in range(80))
    source = f"def short():\n    return 1\n\n\nclass A:\n    @staticmethod\n    def f():\n{body}\n"
    assert long_functions(source) == [("A.f", 6, 82)]
    assert long_functions(source, max_lines=82) == []


def test_no_function_over_80_lines():
    over = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name, line, length in long_functions(path.read_text(encoding="utf-8")):
                over.append(f"{path.relative_to(ROOT)}:{line} {name}: {length} lines")
    assert not over, f"functions over {MAX_LINES} lines (split them into named steps):\n" + \
        "\n".join(over)
