"""The package layout: docchat's subpackages follow the flow, and imports point one way.

    ui -> answer -> context -> library -> ingest      (summaries and comparison beside answer;
                                                       backends used by all three)

Every import in the tree is read from the source (``import`` and ``from`` statements,
including those inside functions), so a lazy import cannot hide a wrong dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What each layer may not import. A layer lower in the flow never reaches up.
FORBIDDEN = {
    "docchat.library": ("docchat.context", "docchat.answer", "docchat.summaries",
                        "docchat.comparison", "docchat.ui", "docchat.cli"),
    "docchat.context": ("docchat.answer", "docchat.summaries", "docchat.comparison",
                        "docchat.ui", "docchat.cli"),
    "docchat.answer": ("docchat.summaries", "docchat.comparison", "docchat.ui", "docchat.cli"),
    "docchat.summaries": ("docchat.answer", "docchat.comparison", "docchat.ui", "docchat.cli"),
    "docchat.comparison": ("docchat.answer", "docchat.summaries", "docchat.ui", "docchat.cli"),
    "docchat.backends": ("docchat.library", "docchat.context", "docchat.answer",
                         "docchat.summaries", "docchat.comparison", "docchat.ui", "docchat.cli"),
    "ingest": ("docchat",),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module a file imports, absolute names (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module_name(path)
                package = here if path.name == "__init__.py" else here.rpartition(".")[0]
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)  # "from pkg import module"
    return out


def sources(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(layer):
    top = layer.replace(".", "/")
    wrong = []
    for path in sources(top):
        for name in imports(path):
            if any(inside(name, f) for f in FORBIDDEN[layer]):
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_only_the_ui_package_and_the_pages_import_streamlit():
    allowed = {ROOT / "app.py", *sources("pages"), *sources("docchat/ui")}
    wrong = [str(p.relative_to(ROOT)) for p in sources("docchat", "ingest")
             if p not in allowed and any(inside(n, "streamlit") for n in imports(p))]
    assert not wrong, f"streamlit imported outside docchat/ui: {wrong}"


def test_docchat_has_few_top_level_modules_beside_its_subpackages():
    top = sorted(p.name for p in (ROOT / "docchat").glob("*.py"))
    assert len(top) <= 8, top
    packages = {p.name for p in (ROOT / "docchat").iterdir() if (p / "__init__.py").exists()}
    assert {"library", "context", "answer", "summaries", "comparison", "ui", "backends",
            "cli"} <= packages


def test_tests_mirror_the_packages():
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}
    assert {"library", "context", "answer", "summaries", "comparison", "ui", "backends",
            "ingest"} <= folders


def test_the_checker_sees_a_lazy_wrong_import(tmp_path):
    # The rule above can fail: an import inside a function is found too.
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from docchat.answer import qa\n    return qa\n")
    assert "docchat.answer.qa" in imports(probe)
