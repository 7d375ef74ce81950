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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="how many files and classes to list")
    args = parser.parse_args()
    per_part: dict[str, int] = {}
    files: list[tuple[str, int]] = []
    all_classes: list[ClassSize] = []
    graph: dict[str, set[str]] = {}
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = source_lines(text)
            per_part[part] = per_part.get(part, 0) + lines
            module = module_name(path)
            files.append((str(path.relative_to(ROOT)), lines))
            tree = ast.parse(text)
            all_classes += classes(tree, module)
            graph[module] = imports(tree, module)
    known = set(graph)
    edges = {m: {i for i in targets if i in known and i != m} for m, targets in graph.items()}
    cycles = sorted(
        f"{a} <-> {b}" for a, targets in edges.items() for b in targets if a < b and a in edges[b]
    )
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
    print("modules importing each other:", ", ".join(cycles) or "none")
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
