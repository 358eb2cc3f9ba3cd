"""The package layout: ingest never imports docchat, and no first-party import cycle exists.

The graph is read from the source (ast), counting every import statement wherever it sits,
so an import moved inside a function to dodge a cycle still counts as an edge.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("docchat", "ingest")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def first_party_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """First-party modules imported anywhere in the file (resolved to known modules)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    # Imports under `if TYPE_CHECKING:` never run: annotations only, not a dependency cycle.
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", None) == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for t in targets:
            # The longest known module that t names (a from-import may name a function).
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def graph() -> dict[str, set[str]]:
    mods = first_party_modules()
    known = set(mods)
    edges = {m: imports_of(p, m, known) for m, p in mods.items()}
    # Importing a submodule runs its packages' __init__ first: parents are not edges of the
    # child's own code, so they are not added here (docchat/__init__ is lazy and imports
    # nothing).
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                cycle = visit(n)
                if cycle:
                    return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def test_ingest_never_imports_docchat():
    edges = graph()
    back = sorted((m, n) for m, ns in edges.items() if m.startswith("ingest")
                  for n in ns if n.startswith("docchat"))
    assert back == []


def test_no_import_cycle_between_first_party_modules():
    assert find_cycle(graph()) is None


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_import_ingest_alone_pulls_in_neither_the_store_nor_sqlite_utils():
    code = ("import sys, ingest; bad = [m for m in sys.modules if m == 'sqlite_utils' or "
            "m.startswith('docchat')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_docchat_is_lazy_and_exposes_the_public_api():
    code = ("import sys, docchat; eager = [m for m in sys.modules if m.startswith('docchat.')];"
            "from docchat import ask, SessionStore, DocchatError, get_backend, load_document;"
            "from docchat import summarize_document, summarize_folder;"
            "print(eager, issubclass(__import__('docchat.errors').errors.DocumentError,"
            " DocchatError))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[] True"
