"""The house's rules, read from the code as text (benchmarks/structure.py's import graph):
imports run one way (adapters -> bot -> memory), no modules import one another around a
loop, no folder holds more than fifteen modules, no class grows past 500 lines, the parts
are layered, and the import rules and the path of a plain message that docs/architecture.md
draws are the ones the code keeps (the path traced by benchmarks/message_path.py)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))

import message_path  # noqa: E402
import structure  # noqa: E402

PAGE = ROOT / "docs" / "architecture.md"


def test_no_modules_import_one_another() -> None:
    assert structure.import_cycles(structure.import_graph()) == []


def test_imports_run_one_way() -> None:
    order = {"adapters": 0, "bot": 1, "memory": 2}
    wrong = [
        f"{module} imports {target}"
        for module, targets in structure.import_graph().items()
        for target in targets
        if order[target.split(".")[0]] < order[module.split(".")[0]]
    ]
    assert wrong == []


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = {}
    for part in structure.PARTS:
        for folder in [ROOT / part, *(p for p in (ROOT / part).rglob("*") if p.is_dir())]:
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > 15:
                crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def test_no_class_is_longer_than_500_lines() -> None:
    long = {}
    for part in structure.PARTS:
        for path in (ROOT / part).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for size in structure.classes(tree, structure.module_name(path)):
                if size.lines > 500:
                    long[size.name] = size.lines
    assert long == {}


def rules() -> dict[str, set[str]]:
    """The page's "Import rules" table: each part and the parts it may import."""
    section = PAGE.read_text(encoding="utf-8").split("## Import rules", 1)[1].split("\n## ")[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            part = cells[0].strip("`")
            table[part] = set(re.findall(r"`([^`]+)`", cells[1]))
    return table


def part_of(module: str, parts: set[str]) -> str:
    """The longest part (a dotted package path as the page names it) holding `module`."""
    names = module.split(".")
    for n in range(len(names), 0, -1):
        if ".".join(names[:n]) in parts:
            return ".".join(names[:n])
    raise AssertionError(f"{module} is in no part the page names")


def test_the_page_draws_the_imports_the_code_makes() -> None:
    table = rules()
    parts = set(table)
    made: dict[str, set[str]] = {part: set() for part in parts}
    for module, targets in structure.import_graph().items():
        here = part_of(module, parts)
        made[here] |= {part_of(t, parts) for t in targets} - {here}
    assert made == table


def test_the_parts_are_layered() -> None:
    """No part reaches back to a part that reaches it (the table is the code's: above), but
    for one: the store opens either of its two dialects (`open_store`, and `migrate` copies
    one into the other), and each dialect is built on what both share."""
    assert structure.import_cycles(rules()) == [
        ["memory.storage", "memory.storage.postgres", "memory.storage.sqlite"]
    ]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_the_page_draws_the_path_a_plain_message_takes() -> None:
    page = PAGE.read_text(encoding="utf-8")
    drawn = page.split("The plain path, module by module", 1)[1].split("```", 2)[1].split()
    assert drawn == await message_path.plain_path()
