"""The floor plan, checked: folders are layers (`cragrag.LAYERS`, bottom to top); a module imports only its own layer
and the layers below it, inside functions too; no import circles; no private name crosses a module; no function is
more complex than a reader can follow (cyclomatic complexity ≤ 20)."""
import ast, re
from pathlib import Path
import cragrag

PKG = Path(cragrag.__file__).parent
RANK = {layer: i for i, layer in enumerate(cragrag.LAYERS)} | {"cli": len(cragrag.LAYERS)}

def modules() -> dict[str, Path]:
    "Every module of the package by dotted name (`cragrag.decide.gate`), packages by their `__init__`."
    out = {}
    for p in PKG.rglob("*.py"):
        if p.name == "_modidx.py": continue
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if p.name == "__init__.py" else parts)] = p
    return out

def imports(name: str, path: Path) -> list[tuple[str, list[str], int]]:
    "`(module imported, names taken from it, line)` for every import of the package's own modules in `name`, at any depth."
    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            mod = ".".join(pkg[:len(pkg) - node.level + 1] + ([node.module] if node.module else [])) if node.level else (node.module or "")
            if mod == "cragrag" or mod.startswith("cragrag."): out.append((mod, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("cragrag.")]
    return out

def layer(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else None     # None: the package root (the lazy names and LAYERS)

MODS = modules()
EDGES = {m: imports(m, p) for m, p in MODS.items()}

def test_every_folder_is_a_layer():
    folders = {p.parent.relative_to(PKG).parts[0] for p in PKG.rglob("*/__init__.py")}
    assert folders == set(cragrag.LAYERS)
    assert sorted(p.name for p in PKG.glob("*.py")) == ["__init__.py", "_modidx.py", "cli.py"]

def test_no_import_from_a_higher_layer():
    up = [f"{m}:{line} imports {t} ({layer(m)} → {layer(t)})" for m, es in EDGES.items() for t, _, line in es
          if layer(t) and layer(m) and RANK[layer(t)] > RANK[layer(m)]]
    assert up == []

def test_no_private_name_crosses_a_module():
    private = [f"{m}:{line} takes {n} from {t}" for m, es in EDGES.items() for t, names, line in es
               if t != m for n in names if re.match(r"_[A-Za-z]", n)]
    assert private == []

def test_no_import_cycles():
    graph = {m: {t if t in MODS else t.rsplit(".", 1)[0] for t, names, _ in es} | {f"{t}.{n}" for t, names, _ in es for n in names if f"{t}.{n}" in MODS}
             for m, es in EDGES.items()}
    graph = {m: {t for t in ts if t in MODS and t != m and t != "cragrag" and not m.startswith(t + ".")} for m, ts in graph.items()}
    seen, on, cycles = set(), [], []
    def visit(v):
        if v in on: cycles.append(on[on.index(v):] + [v]); return
        if v in seen: return
        seen.add(v); on.append(v)
        for w in sorted(graph[v]): visit(w)
        on.pop()
    for v in sorted(graph): visit(v)
    assert cycles == []

def test_complexity():
    from radon.complexity import cc_visit      # a dev dependency
    high = [f"{p.relative_to(PKG)}:{b.lineno} {b.name} {b.complexity}" for p in MODS.values()
            for b in cc_visit(p.read_text(encoding="utf-8")) if b.complexity > 20]
    assert high == []
