#!/usr/bin/env python3
"""The house's measures (issue 53, "The house, second pass"), counted from the tree as it stands.

Run from anywhere: `python3 scripts/house_report.py` prints a Markdown table (measure, value now,
goal, how counted); `--json` prints the same numbers as JSON. The counts follow the grep recipes
of research/aesthetics-review-4.md (its appendix and sections 0, 3, 4, 5, 8) as closely as the
tree allows; each row's note says what was counted. Standard library only; the function lengths
use universal-ctags when it is installed, else a brace scanner (C++) and `ast` (Python).
Re-run it before and after a redesign and compare.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Callable, Iterable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE_DIRS = ("include", "src", "tools", "python")
CPP_EXT = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh")
CODE_EXT = CPP_EXT + (".py",)


# ---- the tree -----------------------------------------------------------------------------------

def _list_files() -> list[str]:
    """Tracked files plus untracked ones git does not ignore (the tree as it stands), that exist."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, check=True).stdout.decode()
        names = sorted({n for n in out.split("\0") if n})
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the folders
        names = []
        for top, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__"]
            names += [os.path.relpath(os.path.join(top, f), ROOT) for f in files]
        names.sort()
    return [n.replace(os.sep, "/") for n in names if os.path.isfile(os.path.join(ROOT, n))]


FILES = _list_files()
_TEXT: dict[str, list[str]] = {}


def lines_of(path: str) -> list[str]:
    """The file's lines (no newlines); [] for a binary or unreadable file."""
    if path not in _TEXT:
        try:
            with open(os.path.join(ROOT, path), "rb") as f:
                data = f.read()
            _TEXT[path] = [] if b"\0" in data[:8192] else data.decode("utf-8", "replace").split("\n")
        except OSError:
            _TEXT[path] = []
    return _TEXT[path]


def files(under: Iterable[str] = CODE_DIRS, ext: tuple = CODE_EXT) -> list[str]:
    """Files under the given folders (or exact file paths) whose names end in ext."""
    under = tuple(under)
    return [f for f in FILES if f.endswith(ext)
            and any(f == u or f.startswith(u.rstrip("/") + "/") for u in under)]


def code(line: str, path: str) -> str:
    """The line without its comment (// for C++, # for Python; strings are not parsed)."""
    if path.endswith(".py"):
        return "" if line.lstrip().startswith("#") else line
    at = line.find("//")
    return line if at < 0 else line[:at]


def grep(pattern: str, paths: Iterable[str], comments: bool = True) -> list[tuple[str, int, str]]:
    """(path, line number, line) of every line matching pattern; comments=False drops comments."""
    rx = re.compile(pattern)
    hits = []
    for p in paths:
        for n, line in enumerate(lines_of(p), 1):
            if rx.search(line if comments else code(line, p)):
                hits.append((p, n, line))
    return hits


def per_file(hits: list) -> str:
    """'a.cpp 3, b.py 1' from grep hits, most first."""
    counts: dict[str, int] = {}
    for p, _, _ in hits:
        counts[p] = counts.get(p, 0) + 1
    return ", ".join(f"{os.path.basename(p)} {n}" for p, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def where(hits: list, limit: int = 6) -> str:
    """'a.cpp:12, b.py:3, ...' from grep hits."""
    text = ", ".join(f"{os.path.basename(p)}:{n}" for p, n, _ in hits[:limit])
    return text + (f", ... (+{len(hits) - limit})" if len(hits) > limit else "")


def python_tree(path: str) -> ast.AST | None:
    try:
        return ast.parse("\n".join(lines_of(path)), filename=path)
    except SyntaxError:
        return None


def own_nodes(fn: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a function's body, those of the functions and lambdas nested in it excluded."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield node
            stack.extend(ast.iter_child_nodes(node))


def result(value: str, how: str, **numbers: int) -> dict:
    return {"value": value, "how": how, "numbers": numbers}


# ---- 1. hand places of an op --------------------------------------------------------------------

# Not hand-written statements of an op: tests, benchmarks, fuzz targets, vendored code and the
# generated documents (docs/quick_reference.md, docs/gallery/, docs/cli.md's op table).
PLACE_EXCLUDED = ("tests/", "bench/", "fuzz/", "third_party/", "docs/gallery/", "docs/quick_reference.md",
                  "scripts/house_report.py")
PLACE_GAP = 10  # hits this many lines apart or closer in one file are one place

OP_PATTERNS = {  # op -> [(regex, only in paths containing)]
    "torch.gather": [(r"\btorch\.gather\b|\bTensor\.gather\b|\bT\.gather\b", ""),
                     (r"^\s*(def|Status)\s+gather\s*\(|^gather\s*=", "torch")],
    "torch.index_add": [(r"index_add", "")],
}


def _generated_lines(path: str) -> set[int]:
    """Line numbers of the generated part of a hand-written file: docs/cli.md's op table (the run
    of '|' lines from "| class | ops | flags |" under "### Framework ops", tools/update_docs.sh)."""
    if path != "docs/cli.md":
        return set()
    skip, section, inside = set(), False, False
    for n, line in enumerate(lines_of(path), 1):
        if line.startswith("### "):
            section, inside = line == "### Framework ops", False
        if section and line == "| class | ops | flags |":
            inside = True
        if inside and line.startswith("|"):
            skip.add(n)
        elif inside:
            inside = section = False
    return skip


def _places(op: str, under: tuple = ("",)) -> tuple[int, int, int]:
    """(places, lines, files) of an op's mentions in the files under `under`, outside PLACE_EXCLUDED."""
    paths = [f for f in FILES if not f.startswith(PLACE_EXCLUDED) and f.startswith(under)]
    hits: dict[str, list[int]] = {}
    for pattern, only in OP_PATTERNS[op]:
        for p, n, _ in grep(pattern, [f for f in paths if only in f]):
            if n not in _generated_lines(p):
                hits.setdefault(p, []).append(n)
    places = lines = 0
    for numbers in hits.values():
        numbers = sorted(set(numbers))
        lines += len(numbers)
        places += 1 + sum(1 for a, b in zip(numbers, numbers[1:]) if b - a > PLACE_GAP)
    return places, lines, len(hits)


def op_places() -> dict:
    g, i = _places("torch.gather"), _places("torch.index_add")
    code_dirs = tuple(d + "/" for d in CODE_DIRS)
    gc, ic = _places("torch.gather", code_dirs), _places("torch.index_add", code_dirs)
    return result(
        f"torch.gather {g[0]} places in {g[2]} files ({g[1]} lines; in include/src/tools/python: "
        f"{gc[0]} in {gc[2]}); torch.index_add {i[0]} in {i[2]} ({i[1]} lines; code: {ic[0]} in {ic[2]})",
        "lines naming the op (`torch.gather`/`Tensor.gather`, plus `def`/`Status gather(` and "
        "`gather =` in torch files; `index_add`) in every file but tests/, bench/, fuzz/, "
        "third_party/ and generated docs (quick_reference.md, gallery/, cli.md's op table); "
        f"hits <= {PLACE_GAP} lines apart in a file are one place. Docs, examples and comments "
        "count (every mention, not only those that state a fact)",
        gather_places=g[0], gather_lines=g[1], gather_files=g[2],
        gather_code_places=gc[0], gather_code_files=gc[2],
        index_add_places=i[0], index_add_lines=i[1], index_add_files=i[2],
        index_add_code_places=ic[0], index_add_code_files=ic[2])


# ---- 2. hand lists beside the rows --------------------------------------------------------------

def _k_rows() -> int:
    """String entries of `kRows[] = {...}` lists in C++ (the torch library's row list)."""
    n = 0
    for p in files(("src", "python", "include"), CPP_EXT):
        for m in re.finditer(r"\bkRows\s*\[\]\s*=\s*\{(.*?)\};", "\n".join(lines_of(p)), re.S):
            n += len(re.findall(r'"[^"]*"', m.group(1)))
    return n


def _docstring_tables() -> tuple[int, int]:
    """(tables, signature rows) of RST simple tables in python/multigather that list op signatures
    (a ``name(`` in the table)."""
    tables = rows = 0
    border = re.compile(r"^\s*={3,}( +={3,})+\s*$")
    for p in files(("python/multigather",), (".py",)):
        marks = [n for n, line in enumerate(lines_of(p)) if border.match(line)]
        # A simple table is [top, (header rule,) bottom]: pair the borders from the top.
        spans, k = [], 0
        while k + 1 < len(marks):
            body = lines_of(p)[marks[k] + 1:marks[k + 1]]
            if k + 2 < len(marks) and len(body) <= 2:  # a header: the table ends at the third border
                spans.append((marks[k], marks[k + 2]))
                k += 3
            else:
                spans.append((marks[k], marks[k + 1]))
                k += 2
        for a, b in spans:
            signatures = sum(len(re.findall(r"``[a-z_]\w*\(", line)) for line in lines_of(p)[a:b])
            if signatures:
                tables += 1
                rows += signatures
    return tables, rows


def _routes() -> int:
    """Keys of `routes = {...}` dicts in python/multigather, plus the names of the tuples a loop
    in the same function adds routes for."""
    n = 0
    for p in files(("python/multigather",), (".py",)):
        tree = python_tree(p)
        for fn in ast.walk(tree) if tree else []:
            if not isinstance(fn, ast.FunctionDef):
                continue
            body = list(own_nodes(fn))
            dicts = [a.value for a in body if isinstance(a, ast.Assign) and isinstance(a.value, ast.Dict)
                     and any(isinstance(t, ast.Name) and t.id == "routes" for t in a.targets)]
            if dicts:
                n += sum(len(d.keys) for d in dicts)
                n += sum(len(loop.iter.elts) for loop in body
                         if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Tuple)
                         and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                 for e in loop.iter.elts))
    return n


def _test_functions() -> int:
    """Keys of module-level `FUNCTIONS = {...}` in tests/python/*.py (not the upstream suites)."""
    n = 0
    for p in files(("tests/python",), (".py",)):
        if p.count("/") != 2:
            continue
        tree = python_tree(p)
        for node in tree.body if tree else []:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == "FUNCTIONS" for t in node.targets)):
                n += len(node.value.keys)
    return n


def hand_lists() -> dict:
    src_cpp = files(("src",), CPP_EXT)
    declared = len(grep(r"^\s*void\s+append_\w+_ops\s*\([^)]*\)\s*;", src_cpp))
    called = len(grep(r"\bappend_\w+_ops\s*\(\s*&", src_cpp, comments=False))
    handles = len(grep(r"^\w+\s*=\s*_ops\.\w+\.default\b", files(("python/multigather",), (".py",))))
    tables, table_rows = _docstring_tables()
    kinds = {"kRows": _k_rows(), "torch op handles": handles, "docstring op tables": tables,
             "routes": _routes(), "test FUNCTIONS": _test_functions(), "append_* ops": declared + called}
    present = sum(1 for v in kinds.values() if v)
    return result(
        f"{present} of {len(kinds)} kinds: kRows {kinds['kRows']} rows; {handles} op handles; "
        f"{tables} docstring table ({table_rows} signatures); routes {kinds['routes']} entries; "
        f"FUNCTIONS {kinds['test FUNCTIONS']} entries; append_* {declared} declared + {called} called",
        "kRows[] string entries (C++); `name = _ops.x.default` lines (python/multigather); RST tables "
        "listing ``op(`` signatures in its docstrings; keys of `routes = {}` plus looped name "
        "tuples; keys of tests/python `FUNCTIONS = {}`; `void append_*_ops(...);` and "
        "`append_*_ops(&` in src",
        kinds=present, k_rows=kinds["kRows"], op_handles=handles, docstring_tables=tables,
        docstring_table_signatures=table_rows, routes=kinds["routes"],
        test_functions=kinds["test FUNCTIONS"], append_declared=declared, append_called=called)


# ---- 3. lowering caches -------------------------------------------------------------------------

def lowering_caches() -> dict:
    paths = files(("python/src", "python/torch_library", "src"), CPP_EXT)
    defined = {p for p, _, _ in grep(r"^\s*(bool|void)\s+(lowering_anchors|move_lowering)\s*\(", paths)}
    users = grep(r"\b(lowering_anchors|move_lowering)\s*\(", [p for p in paths if p not in defined],
                 comments=False)
    homes = sorted({p for p, _, _ in users})
    classes = [m.group(2) for p in homes for _, _, line in grep(r"\b(class|struct)\s+(\w*Cache)\b", [p])
               for m in [re.search(r"\b(class|struct)\s+(\w*Cache)\b", line)]]
    holders = sorted({p for p, _, _ in grep(r"\bLoweringCache\b", [p for p in paths if "lowering_cache" not in p],
                                              comments=False)})
    return result(
        f"{len(homes)} caches: " + ", ".join(os.path.basename(p) for p in homes)
        + (f" (classes: {', '.join(classes)})" if classes else "")
        + (f"; held by {', '.join(os.path.basename(p) for p in holders)}" if holders else ""),
        "files in python/src, python/torch_library, src that call `lowering_anchors(`/`move_lowering(` "
        "in code (the file that defines them excluded): each keeps its own lowering cache",
        caches=len(homes), cache_classes=len(classes))


# ---- 4. CUDA #ifs in src/api --------------------------------------------------------------------

def cuda_ifs() -> dict:
    hits = grep(r"MULTIGATHER_HAVE_CUDA", files(("src/api",), CPP_EXT))
    # Engine implementations: classes deriving from the one interface (api/engine.hpp); device
    # dispatchers: a struct or class elsewhere that keeps a `cuda` flag and branches on it per step.
    api = files(("src/api", "src/kernels"), CPP_EXT)
    engines = grep(r"class \w+ final : public Engine\b", api, comments=False)
    dispatchers = grep(r"^\s*bool cuda\s*=", api, comments=False)
    return result(f"{len(hits)} ({per_file(hits)}); engines behind one interface: {len(engines)} "
                  f"({per_file(engines)}); other device dispatchers (a `bool cuda` member): {len(dispatchers)}",
                  "`grep -c MULTIGATHER_HAVE_CUDA src/api/*`, summed (lines, comments included); classes "
                  "`final : public Engine` in src/api and src/kernels; `bool cuda =` members there",
                  cuda_ifs=len(hits), files=len({p for p, _, _ in hits}), engines=len(engines),
                  dispatchers=len(dispatchers))


# ---- 5. data work in src/frontends --------------------------------------------------------------

# A frontend line that allocates a host buffer, fills or copies one, or reads an operand's values.
DATA_WORK = (r"make_shared<Tensor>|Tensor::copy_of|std::mem(cpy|set)\s*\(|\bread_index(_value)?\s*\("
             r"|static_cast<const [\w:]+\s*\*>\(\s*[\w.>-]*(\.|->)data\)"
             r"|\b(contiguous|negated_copy|scaled_copy|scale_into)\s*\(")


def frontend_data_work() -> dict:
    cpp = files(("src/frontends",), (".cpp",))
    guards = [h for h in grep(r"Device::kCUDA", cpp, comments=False)
              if not re.search(r"case\s+Device::kCUDA\s*:\s*return\s*\"", h[2])]
    data = grep(DATA_WORK, cpp, comments=False)
    return result(
        f"{len(guards)} device guards ({per_file(guards)}); {len(data)} data lines in "
        f"{len({p for p, _, _ in data})} files ({per_file(data)})",
        "in src/frontends/*.cpp code. Guards: `Device::kCUDA` (a `case ...: return \"cuda\"` name "
        "excluded); data: lines that allocate/copy host buffers (make_shared<Tensor>, "
        "copy_of, memcpy/memset), read operand values (read_index*, casts of `.data`) or define/call "
        "contiguous / negated_copy / scaled_copy / scale_into (zeros_input no longer: it makes a constant view)",
        device_guards=len(guards), data_lines=len(data), data_files=len({p for p, _, _ in data}))


# ---- 6. index resolvers -------------------------------------------------------------------------

def index_resolvers() -> dict:
    """Definitions of resolve_index (C++, an adapter that calls another resolve_index excluded)
    and `def _resolve*` (Python), under src and python."""
    homes = []
    for p, n, line in grep(r"^\s*(MULTIGATHER_HOST_DEVICE\s+)?(inline\s+)?[\w:<>]+\s+resolve_index\s*\(",
                           files(("src", "python"), CPP_EXT)):
        body = "\n".join(lines_of(p)[n - 1:n + 4])
        if not re.search(r"::resolve_index\s*[<(]", body):  # an adapter over the core's resolver
            homes.append((p, n, line))
    homes = [h for k, h in enumerate(homes) if h[0] not in {q for q, _, _ in homes[:k]}]  # one per file
    py = grep(r"^\s*def\s+_resolve\w*\s*\(", files(("src", "python"), (".py",)))
    every = homes + py
    return result(f"{len(every)}: {where(every)}",
                  "`resolve_index` definitions in src/python C++ (one per file; adapters calling "
                  "`::resolve_index` excluded) + `def _resolve*` in Python; the reference oracle "
                  "lives in tests and is not counted",
                  resolvers=len(every))


# ---- 7. messages --------------------------------------------------------------------------------

def _message_branches() -> list:
    """C++ tests of a Status message's text (message().find / rfind / starts_with / compare, also
    through a `= x.message();` local) in src and python; Python `... in str(e)` and
    `str(e).startswith/find` in python/multigather."""
    hits = []
    for p in files(("src", "python"), CPP_EXT):
        text = lines_of(p)
        for n, line in enumerate(text, 1):
            c = code(line, p)
            if re.search(r"message\(\)\s*\.\s*(r?find|starts_with|ends_with|compare)\s*\(", c):
                hits.append((p, n, line))
            m = re.search(r"(\w+)\s*=\s*[\w.>-]*message\(\)\s*;", c)
            if m:
                for k in range(n, min(n + 4, len(text))):
                    if re.search(rf"\b{m.group(1)}\s*\.\s*(r?find|starts_with|ends_with|compare)\s*\(",
                                 code(text[k], p)):
                        hits.append((p, k + 1, text[k]))
    hits += grep(r"\bin\s+str\(\w+\)|str\(\w+\)\.(startswith|endswith|find|index)\(",
                 files(("python/multigather",), (".py",)), comments=False)
    return hits


def _out_of_range_sites() -> list:
    """Index out-of-range sentences: 'is out of range' opening a string literal (or after an
    f-string field), in a statement that raises OutOfRange / IndexError / TORCH_CHECK_INDEX or
    words an index_text; axis, dim and attribute range messages (InvalidArgument) excluded."""
    hits = []
    for p in files(("src", "python"), CPP_EXT + (".py",)):
        text = lines_of(p)
        for n, line in enumerate(text, 1):
            c = code(line, p)
            if not re.search(r"(\"|\}|')\s*is out of range", c):
                continue
            statement = code(text[n - 2], p) + c if n > 1 else c
            if (re.search(r"OutOfRange\(|IndexError|TORCH_CHECK_INDEX|index_text\(", statement)
                    and not re.search(r"\b(dim|axis|axes)\s*=\s*[{\"]", statement)):
                hits.append((p, n, line))
    return hits


def messages() -> dict:
    branches = _message_branches()
    recipe = [h for h in branches if re.search(r"message\(\)\s*\.\s*find\(", h[2])]
    strs = grep(r"std::string\s+str\s*\(\s*std::int64_t\s+\w+\s*\)\s*\{", files(("src", "python"), CPP_EXT))
    oor = _out_of_range_sites()
    return result(
        f"text branches {len(branches)} ({len(recipe)} `message().find`; {where(branches, 10)}); "
        f"str(int64) definitions {len(strs)}; "
        f"out-of-range sentences {len(oor)} in {len({p for p, _, _ in oor})} files ({where(oor, 10)})",
        "branches: C++ `message().find/rfind/...` (also via a local copy of the message) in src, "
        "python + Python `in str(e)` / `str(e).startswith` in python/multigather; `std::string "
        "str(std::int64_t ...) {` definitions; index out-of-range sentences (a literal starting "
        "'is out of range' in an OutOfRange/IndexError/TORCH_CHECK_INDEX/index_text statement; "
        "axis/dim/attribute ranges excluded)",
        text_branches=len(branches), message_find=len(recipe), str_definitions=len(strs),
        out_of_range_sites=len(oor), out_of_range_files=len({p for p, _, _ in oor}))


# ---- 8. "may this factor stay split" ------------------------------------------------------------

SPLIT_FILES = ("python/multigather/_jax_sharding.py", "python/multigather/_dtensor.py")
SPLIT_FACTS = re.compile(r"\breduction\b|\binclude_input\b|\bcopies_input\b")


def _deciders(path: str) -> list[tuple[int, str]]:
    """Functions of path whose own tests (if / ternary / and-or, nested functions not included)
    read a factor's sum conditions: the reduction, include_input or copies_input."""
    tree = python_tree(path)
    found = []
    for fn in ast.walk(tree) if tree else []:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            tests = [n.test if isinstance(n, (ast.If, ast.IfExp)) else n for n in own_nodes(fn)
                     if isinstance(n, (ast.If, ast.IfExp, ast.BoolOp))]
            if any(SPLIT_FACTS.search(ast.unparse(t)) for t in tests):
                found.append((fn.lineno, fn.name))
    return found


def split_rule() -> dict:
    places = [(p, n, name) for p in SPLIT_FILES if p in FILES for n, name in _deciders(p)]
    in_cpp = grep(r"enum\s+class\s+\w*(Strategy|Placement)\b",
                  files(("include/multigather", "src/plan"), CPP_EXT))
    listed = ", ".join(f"{os.path.basename(p)}:{n} {name}" for p, n, name in places)
    return result(
        f"{len(places)} Python functions ({listed}); C++ per-factor strategy: {'yes' if in_cpp else 'no'}",
        "functions in _jax_sharding.py / _dtensor.py whose if / and-or tests read the sum "
        "conditions (reduction, include_input, copies_input; ast); C++: an `enum class *Strategy` "
        "in include/multigather or src/plan",
        python_places=len(places), cpp_strategy=len(in_cpp))


# ---- 9. layering --------------------------------------------------------------------------------

# The public headers of the types core itself implements; any other "multigather/" header that
# src/core includes belongs to an upper layer (execute, registry, lowering, transforms, ...).
CORE_PUBLIC = ("dtype.hpp", "status.hpp", "tensor.hpp", "options.hpp", "output_memory.hpp", "interrupt.hpp",
               "task_pool.hpp", "index_error_context.hpp")


def layering() -> dict:
    core = [h for h in grep(r'#include "multigather/', files(("src/core",), CPP_EXT))
            if re.search(r'#include "multigather/([\w/.]+)"', h[2]).group(1) not in CORE_PUBLIC]
    plan = grep(r'#include "plan/', files(("src/frontends",), CPP_EXT))
    surfaces = grep(r'#include "(core|plan|kernels|frontends|api|explain)/',
                    files(("python", "tools", "include"), CPP_EXT))
    every = core + plan + surfaces
    return result(f"{len(every)} ({where(every)})" if every else "0",
                  "`#include \"multigather/` in src/core (but core's own: " + ", ".join(CORE_PUBLIC)
                  + ") + `#include \"plan/` in src/frontends + "
                  "internal includes (core|plan|kernels|frontends|api|explain) in python, tools, include",
                  broken=len(every), core_up=len(core), frontends_plan=len(plan), surfaces=len(surfaces))


# ---- 10. big files and long functions -----------------------------------------------------------

def _ctags_functions(paths: list[str]) -> list | None:
    """(lines, path, line, name) of every function/method from universal-ctags, None without it."""
    ctags = shutil.which("ctags")
    if not ctags:
        return None
    try:
        version = subprocess.run([ctags, "--version"], capture_output=True, text=True, timeout=10).stdout
        if "Universal Ctags" not in version:
            return None
        out = subprocess.run([ctags, "--fields=+ne", "--output-format=json", "-L", "-", "-f", "-"],
                             input="\n".join(paths), capture_output=True, text=True, cwd=ROOT,
                             timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = set()
    for row in out.splitlines():
        try:
            d = json.loads(row)
        except ValueError:
            continue
        python = d.get("path", "").endswith(".py")
        if "end" in d and (d.get("kind") in ("function", "method") or python and d.get("kind") == "member"):
            scope = "" if python else re.sub(r"(^|::)(__anon\w+|multigather)(?=::|$)", "", d.get("scope", ""))
            name = scope.strip(":") + "::" + d["name"] if scope.strip(":") else d["name"]
            found.add((d["end"] - d["line"] + 1, d["path"], d["line"], name))
    return list(found)


def _strip_cpp(text: str) -> str:
    """C++ text with comments, string / char literals and preprocessor lines blanked (newlines kept)."""
    rx = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\''
                    r"|^[ \t]*#[^\n]*", re.S | re.M)
    return rx.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _scanned_functions(paths: list[str]) -> list:
    """The fallback: outermost brace blocks whose header ends in `name(...)` (C++), ast (Python)."""
    found = []
    header_rx = re.compile(r"([~\w:]+)\s*\([^;{}]*\)\s*(const|noexcept|override|final|mutable|&|\s|"
                           r"->\s*[\w:<>,\s*&]+)*$", re.S)
    for p in paths:
        if p.endswith(".py"):
            tree = python_tree(p)
            found += [(n.end_lineno - n.lineno + 1, p, n.lineno, n.name)
                      for n in (ast.walk(tree) if tree else [])
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            continue
        text = _strip_cpp("\n".join(lines_of(p)))
        stack, start, line = [], 0, 1
        for i, ch in enumerate(text):
            if ch == "\n":
                line += 1
            elif ch == "{":
                m = header_rx.search(text[start:i])
                is_fn = (m is not None and not any(f for f, _, _ in stack)
                         and m.group(1) not in ("if", "for", "while", "switch", "catch", "return"))
                at = line - text[start + m.start(1):i].count("\n") if m else line
                stack.append((is_fn, at, m.group(1) if m else ""))
                start = i + 1
            elif ch == "}":
                if stack:
                    is_fn, at, name = stack.pop()
                    if is_fn:
                        found.append((line - at + 1, p, at, name))
                start = i + 1
            elif ch == ";":
                start = i + 1
    return found


LONGEST: list = []  # filled by big_files_and_functions, printed under the table


def big_files_and_functions() -> dict:
    paths = files(CODE_DIRS, CODE_EXT)
    big = sorted(((len(lines_of(p)) - (lines_of(p)[-1:] == [""]), p) for p in paths), reverse=True)
    big = [(n, p) for n, p in big if n >= 1100]
    functions = _ctags_functions(paths)
    tool = "universal-ctags"
    if functions is None:
        functions, tool = _scanned_functions(paths), "a brace scanner (C++) and ast (Python)"
    functions.sort(key=lambda f: (-f[0], f[1], f[2]))
    long_ones = [f for f in functions if f[0] >= 100]
    LONGEST[:] = functions[:12]
    return result(
        f"{len(big)} files ({', '.join(f'{os.path.basename(p)} {n}' for n, p in big)}); "
        f"{len(long_ones)} of {len(functions)} functions",
        f"C++/CUDA/Python files in include, src, tools, python with >= 1,100 lines; functions "
        f">= 100 lines, definition to closing brace, by {tool} (the 12 longest are listed below)",
        big_files=len(big), long_functions=len(long_ones), functions=len(functions))


# ---- 11. timings in comments --------------------------------------------------------------------

TIMING = r"[0-9.]+ ?(->|to) ?[0-9.]+ ?(ms|us)|[0-9.]+ ms\b"


def timings_in_comments() -> dict:
    review_dirs = ("src/kernels/cpu", "python/src", "python/torch_fast", "python/torch_library")
    review = grep(TIMING, [f for f in files(review_dirs, CODE_EXT) if os.path.dirname(f) in review_dirs
                           and (f.startswith("src/") or f.endswith(".cpp"))])
    every = grep(TIMING, files(("src", "python"), CODE_EXT))
    return result(f"{len(every)} lines in {len({p for p, _, _ in every})} files ({per_file(every)})",
                  f"the review's regex `{TIMING}` over every C++/Python file of src and python "
                  f"(over the review's files only: {len(review)}); 'us'-only figures are not matched",
                  lines=len(every), review_files_lines=len(review))


# ---- 12. hand-written torch gradients -----------------------------------------------------------

def _python_hand_backwards() -> list:
    """Backward functions given to register_autograd (or an autograd.Function's backward) in
    python/multigather that compute with tensor arithmetic (* / - or .sum/.mul/.prod) instead of
    only calling a multigather backward op."""
    hits = []
    for p in files(("python/multigather",), (".py",)):
        tree = python_tree(p)
        if tree is None:
            continue
        defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        backwards = [defs.get(c.args[0].id) for c in ast.walk(tree)
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                     and c.func.attr == "register_autograd" and c.args and isinstance(c.args[0], ast.Name)]
        backwards += [f for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
                      and any("Function" in ast.unparse(b) for b in cls.bases)
                      for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "backward"]
        for fn in filter(None, backwards):
            math = any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div, ast.Sub))
                       or isinstance(n, ast.Attribute) and n.attr in ("sum", "mul", "prod", "div")
                       for n in ast.walk(fn))
            if math:
                hits.append((p, fn.lineno, fn.name))
    return hits


def hand_gradients() -> dict:
    definitions = grep(r"^[\w:<>, ]*Tensor[\w:<>, ]*[\s*&]+\w+_grads?\s*\(", files(("python",), CPP_EXT))
    cpp = [(p, n, re.search(r"(\w+_grads?)\s*\(", line).group(1))
           for p, n, line in definitions if not line.rstrip().endswith(";")]
    py = _python_hand_backwards()
    every = cpp + py
    listed = ", ".join(f"{name} ({os.path.basename(p)}:{n})" for p, n, name in every)
    return result(f"{len(every)}: {listed}",
                  "C++ definitions of tensor-returning `*_grad(s)(` functions under python/ + "
                  "Python backwards given to register_autograd / autograd.Function that do tensor "
                  "arithmetic themselves (ast); the generic execute_vjp nodes are not counted",
                  hand_gradients=len(every), cpp=len(cpp), python=len(py))


# ---- the report ---------------------------------------------------------------------------------

MEASURES: list[tuple[str, Callable[[], dict], str]] = [
    ("1. hand places of torch.gather / torch.index_add", op_places, "≤ 4 each"),
    ("2. hand lists beside the rows", hand_lists, "0"),
    ("3. lowering caches", lowering_caches, "1 class"),
    ("4. CUDA #ifs in src/api; device dispatchers", cuda_ifs, "≤ 4; 1 Engine interface, 2 engines"),
    ("5. data work in src/frontends (device guards; copy/scan sites)", frontend_data_work, "0"),
    ("6. index resolvers", index_resolvers, "1 + the reference oracle"),
    ("7. message text branches / str(int64) / out-of-range sentences", messages, "0 / 1 / 2"),
    ("8. \"may this factor stay split\" rule", split_rule, "once, in C++"),
    ("9. layering rules broken", layering, "0"),
    ("10. files ≥ 1,100 lines / functions ≥ 100 lines", big_files_and_functions, "0 / few"),
    ("11. measured timings in code comments", timings_in_comments, "0"),
    ("12. hand-written torch gradients", hand_gradients, "0"),
]


def total_lines() -> int:
    """`git ls-files include src tools python | xargs cat | wc -l`."""
    return sum(len(lines_of(p)) - 1 for p in files(CODE_DIRS, ext=("",)) if lines_of(p))


def report() -> dict:
    rows = []
    for name, measure, goal in MEASURES:
        rows.append({"measure": name, "goal": goal, **measure()})
    longest = [{"lines": n, "path": p, "line": at, "name": name} for n, p, at, name in LONGEST]
    return {"measures": rows, "total_lines": total_lines(), "longest_functions": longest}


def markdown(data: dict) -> str:
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    out = ["| measure | now | goal | how counted |", "|---|---|---|---|"]
    out += [f"| {cell(r['measure'])} | {cell(r['value'])} | {cell(r['goal'])} | {cell(r['how'])} |"
            for r in data["measures"]]
    out += ["", "Longest functions:", ""]
    out += [f"{k}. {f['lines']} lines `{f['name']}` ({f['path']}:{f['line']})"
            for k, f in enumerate(data["longest_functions"], 1)]
    out += ["", "Lines in include, src, tools, python (git ls-files | xargs cat | wc -l): "
            f"{data['total_lines']}"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    data = report()
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
