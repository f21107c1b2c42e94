"""No import cycles, in the Python package or between the Rust crates' modules.

Python: every import counts wherever it is written (inside functions too), except
under ``if TYPE_CHECKING:``. ``from coflowkit.pkg import name`` is an edge to the
submodule ``coflowkit.pkg.name`` when that is a module, else to ``coflowkit.pkg``.

Rust: within each crate, ``use crate::a::...`` (and ``crate::a::`` paths) in module
``m`` is an edge from ``m`` to ``a`` (the longest module prefix of the path); a
module's edges to its own submodules and to the crate root's re-exports are
followed to where the item lives.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "python" / "coflowkit"


def python_modules() -> dict[str, Path | None]:
    mods = {}
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    mods["coflowkit._core"] = None  # the compiled extension: imports nothing of ours
    return mods


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def python_edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        if path is None:
            continue
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        skip: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _type_checking(node):
                skip.update(id(n) for b in node.body for n in ast.walk(b))
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)
            for t in targets:
                if t in mods and t != mod:
                    edges[mod].add(t)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state:
                c = visit(n)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def test_the_python_package_has_no_import_cycle():
    mods = python_modules()
    edges = python_edges(mods)
    assert sum(map(len, edges.values())) > 50  # the parser sees the imports
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# -- Rust ---------------------------------------------------------------------------


def rust_modules(src: Path) -> dict[str, Path]:
    """``a::b`` -> file, for every module file under a crate's src/ (lib.rs is '')."""
    mods = {}
    for p in src.rglob("*.rs"):
        rel = p.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main"):
            parts = parts[:-1]
        elif parts[-1] == "mod":
            parts = parts[:-1]
        mods["::".join(parts)] = p
    return mods


USE = re.compile(r"\buse\s+crate::([^;]+);|\bcrate::((?:\w+::)*\w+)")


def _use_paths(text: str) -> list[str]:
    """Every ``crate::...`` path a file names, braces expanded one level."""
    out = []
    for m in USE.finditer(text):
        if m.group(1):
            body = " ".join(m.group(1).split())
            if "{" in body:
                head, _, inner = body.partition("{")
                inner = inner.rsplit("}", 1)[0]
                depth, cur, items = 0, "", []
                for ch in inner:
                    if ch == "," and depth == 0:
                        items.append(cur)
                        cur = ""
                        continue
                    depth += ch == "{"
                    depth -= ch == "}"
                    cur += ch
                items.append(cur)
                out += [head + it.strip() for it in items if it.strip()]
            else:
                out.append(body)
        else:
            out.append(m.group(2))
    return [p.split(" as ")[0].strip() for p in out]


def _longest_module(parts: list[str], mods: dict[str, Path], start: int = 0) -> str:
    """The longest ``a::b`` prefix of ``parts`` that is a module ('' if none)."""
    found = ""
    for i in range(start, len(parts) + 1):
        if "::".join(parts[:i]) in mods:
            found = "::".join(parts[:i])
    return found


def rust_edges(src: Path) -> dict[str, set[str]]:
    mods = rust_modules(src)
    root_text = mods[""].read_text()
    # Crate-root re-exports: `pub use a::b::Name;` maps Name to module a::b.
    reexport = {}
    for path in _use_paths(root_text.replace("pub use ", "use crate::")):
        parts = path.split("::")
        reexport[parts[-1]] = _longest_module(parts[:-1], mods)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        if mod == "":
            continue
        text = re.sub(r"//.*", "", path.read_text())
        for p in _use_paths(text):
            parts = p.split("::")
            target = _longest_module(parts, mods, 1) or reexport.get(parts[0], "")
            # A module's own descendants and ancestors are not its siblings.
            related = target.startswith(mod + "::") or mod.startswith(target + "::")
            if target and target != mod and not related:
                edges[mod].add(target)
    return edges


def test_no_rust_crate_has_a_module_cycle():
    crates = sorted((ROOT / "crates").glob("*/src"))
    assert len(crates) >= 7
    seen = 0
    for src in crates:
        edges = rust_edges(src)
        seen += sum(map(len, edges.values()))
        cycle = find_cycle(edges)
        assert cycle is None, f"{src.parent.name}: module cycle: " + " -> ".join(cycle)
    assert seen > 50  # the parser sees the uses


def test_the_checks_find_a_cycle_when_there_is_one(tmp_path):
    # Rust: a uses b::X, b uses crate::Y re-exported from a.
    src = tmp_path / "src"
    src.mkdir()
    (src / "lib.rs").write_text("mod a;\nmod b;\npub use a::Y;\n")
    (src / "a.rs").write_text("use crate::b::X;\npub struct Y;\n")
    (src / "b.rs").write_text("use crate::{Y};\npub struct X;\n")
    assert find_cycle(rust_edges(src)) in (["a", "b", "a"], ["b", "a", "b"])
    (src / "b.rs").write_text("pub struct X;\n")
    assert find_cycle(rust_edges(src)) is None
    # Python: an import inside a function counts, one under TYPE_CHECKING does not.
    edges = {"p.a": {"p.b"}, "p.b": {"p.a"}}
    assert find_cycle(edges) == ["p.a", "p.b", "p.a"]
    assert _type_checking(ast.parse("if TYPE_CHECKING:\n    import x\n").body[0])
