"""The shape of the code, for before/after comparisons of a restructuring: source lines per
part (bot/, adapters/, memory/, personas/), the largest files, the largest classes with their
method counts, and the modules that import each other (cycles). Reads the code as text
(ast), runs nothing of it. The last line is JSON.

    python benchmarks/structure.py [--top 10]
"""

from __future__ import annotations

import argparse
import ast
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("bot", "adapters", "memory", "personas")


@dataclass(slots=True, frozen=True)
class ClassSize:
    name: str
    lines: int
    methods: int


def source_lines(text: str) -> int:
    """Lines that are neither blank nor only a comment."""
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def classes(tree: ast.Module, module: str) -> list[ClassSize]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = sum(
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body
            )
            span = (node.end_lineno or node.lineno) - node.lineno + 1
            found.append(ClassSize(f"{module}.{node.name}", span, methods))
    return found


def imports(tree: ast.Module, module: str) -> set[str]:
    """The project modules `module` imports (at any depth of the file)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join([*module.split(".")[: -node.level], node.module])
            out.add(base)
            out |= {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in out if name.split(".")[0] in PARTS}


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports (type-only imports included:
    a cycle of types is still two modules that cannot be read apart)."""
    graph: dict[str, set[str]] = {}
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            module = module_name(path)
            graph[module] = imports(ast.parse(path.read_text(encoding="utf-8")), module)
    return {m: {i for i in targets if i in graph and i != m} for m, targets in graph.items()}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import one another, directly or around a loop (the
    strongly connected components of more than one module, by Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="how many files and classes to list")
    args = parser.parse_args()
    per_part: dict[str, int] = {}
    files: list[tuple[str, int]] = []
    all_classes: list[ClassSize] = []
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = source_lines(text)
            per_part[part] = per_part.get(part, 0) + lines
            files.append((str(path.relative_to(ROOT)), lines))
            all_classes += classes(ast.parse(text), module_name(path))
    cycles = [" -> ".join(cycle) for cycle in import_cycles(import_graph())]
    files.sort(key=lambda f: -f[1])
    all_classes.sort(key=lambda c: -c.lines)
    for part, lines in per_part.items():
        print(f"{part:10} {lines:6} lines")
    print("largest files:")
    for name, lines in files[: args.top]:
        print(f"  {lines:5}  {name}")
    print("largest classes (lines, methods):")
    for c in all_classes[: args.top]:
        print(f"  {c.lines:5} {c.methods:3}  {c.name}")
    print("modules importing one another:", "; ".join(cycles) or "none")
    print(
        json.dumps(
            {
                "lines": per_part,
                "files": len(files),
                "largest_files": dict(files[: args.top]),
                "largest_classes": {c.name: [c.lines, c.methods] for c in all_classes[: args.top]},
                "import_cycles": cycles,
            }
        )
    )


if __name__ == "__main__":
    main()
