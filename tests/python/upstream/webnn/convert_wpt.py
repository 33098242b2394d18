#!/usr/bin/env python3
"""Converts WebNN's web-platform-tests for gather, gatherElements, gatherND, scatterElements and
scatterND into wpt_webnn_cases.json, which test_wpt_webnn.py runs against multigather.webnn.

Run once, by hand, on local copies of the ten upstream files (this script does not fetch them):

    python3 tests/python/upstream/webnn/convert_wpt.py SRC_DIR

SRC_DIR holds conformance_tests/<op>.https.any.js and validation_tests/<op>.https.any.js, each a
verbatim copy of the file named in SOURCES below (repository, path, commit). The script checks
each copy's length and SHA-256 against SOURCES, so that the JSON always says which bytes it
came from. It reads only the tests' data tables (JavaScript object literals) with a small
literal parser, and the harness lines that decide how a case runs (the tolerance function, the
`if (test.axis)` rule, the cases that need two MLGraphBuilder objects); no value is computed or
edited here.

What the JSON keeps of each conformance case: name; op; operands in the order the operator
takes them (input, indices[, updates]) with data, dataType, the concrete shape the test runs
(`shape` where the descriptor has dynamic dimensions, else descriptor.shape) and, verbatim, the
descriptor when it has dynamic dimensions and the `constant` flag; options; expected output;
the tolerance (the harness's function). Of each validation case: name; op; operand dataTypes
and shapes; the options the harness passes; whether WPT expects a TypeError or an output
(dataType, shape); the label the harness passes to a throwing call. The multi-builder cases
(an operand from another MLGraphBuilder) have no operands in a table: their names are kept
with the reason they cannot run here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "wpt_webnn_cases.json")

CHROMIUM = ("miaobin/chromium", "third_party/blink/web_tests/external/wpt/webnn/")
GECKO = ("marco-c/gecko-dev-comments-removed", "testing/web-platform/tests/webnn/")

# (local file, mirror repository, path prefix in it, commit, characters, sha256 of our copy)
SOURCES = [
    ("conformance_tests/gather.https.any.js", *CHROMIUM, "4baa23c04ed62eb6e362f64ea6a86ad086a41ee9",
     68996, "a8b4228d907249dfc885165b2326bd6a0013ec7461382db93cc3a9cb8c858361"),
    ("conformance_tests/gatherElements.https.any.js", *CHROMIUM, "4a7dc062837af394994838219e43db75e674ce19",
     15354, "1f002e0c236a1881ccfef4ed18afad9db033dcef910972edb0bae7beac2345ee"),
    ("conformance_tests/gatherND.https.any.js", *CHROMIUM, "4baa23c04ed62eb6e362f64ea6a86ad086a41ee9",
     20838, "905b521a1b0445cf284386e219b97414d30f0caa1e469d6f90841c1869b6123b"),
    ("conformance_tests/scatterElements.https.any.js", *CHROMIUM, "e38cda650bcddd428fdb903d4ae56fe0adcb1909",
     11265, "4157c16283cb40595cb10acc33560732e362930d257b585f9eb82bbb4bbb5f24"),
    ("conformance_tests/scatterND.https.any.js", *CHROMIUM, "e38cda650bcddd428fdb903d4ae56fe0adcb1909",
     8619, "fe6edec9700bf27f877a9d444ff5d89cc9997004c9e996fcdc940404d3b91e39"),
    ("validation_tests/gather.https.any.js", *GECKO, "c810a2831681ab4ec804d6a76f219ebb43ffeb12",
     3565, "c94a6bc5ab9d27b913aef2ef0446334da9ffbbfab51fb939b40861f472d73d32"),
    ("validation_tests/gatherElements.https.any.js", *GECKO, "586297f5f36265400ae729eb598c9e754a327404",
     3381, "cf5580bb0bdc9c8beef99443d792d09332a7bb23e8ef3ec40076332f16f904a2"),
    ("validation_tests/gatherND.https.any.js", *GECKO, "a587a64dd2823a3aeff324619b868b5f400672f5",
     2746, "d594880a377f469a6a49f6776c422c97ded805e1f6d19748ab2587275fee8cc6"),
    ("validation_tests/scatterElements.https.any.js", *GECKO, "a587a64dd2823a3aeff324619b868b5f400672f5",
     5282, "9812bb5ef9c203e8b33c0154b27b37e1d385494f3369efc61e8c7dea0f5a3aff"),
    ("validation_tests/scatterND.https.any.js", *GECKO, "a587a64dd2823a3aeff324619b868b5f400672f5",
     3803, "bd04165bce847c71d8eb9345df5c091e79533c6431fc0884564d9920a8be4961"),
]

OPS = ("gather", "gatherElements", "gatherND", "scatterElements", "scatterND")
# The operands each op takes, in order (WebNN's MLGraphBuilder method signatures).
OPERANDS = {"gather": ("input", "indices"), "gatherElements": ("input", "indices"),
            "gatherND": ("input", "indices"), "scatterElements": ("input", "indices", "updates"),
            "scatterND": ("input", "indices", "updates")}


# ---- A parser for the JavaScript object literals of the data tables ----------------------------

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<number>-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<punct>[\[\]{}:,])
""", re.VERBOSE | re.DOTALL)


def _tokens(text: str, start: int):
    pos = start
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected character {text[pos]!r} at offset {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind in ("space", "line_comment", "block_comment"):
            continue
        yield kind, m.group(), m.start()


def _unquote(token: str) -> str:
    body = token[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def parse_literal(text: str, start: int):
    """The JavaScript literal (array, object, string, number, true/false/null) that starts at
    ``text[start]``: numbers stay as written (int if the literal has no '.' or exponent, else
    float), object keys may be bare names or strings, trailing commas are allowed."""
    tokens = _tokens(text, start)

    def value(tok):
        kind, s, at = tok
        if kind == "punct" and s == "[":
            items = []
            tok = next(tokens)
            while not (tok[0] == "punct" and tok[1] == "]"):
                items.append(value(tok))
                tok = next(tokens)
                if tok[0] == "punct" and tok[1] == ",":
                    tok = next(tokens)
                elif not (tok[0] == "punct" and tok[1] == "]"):
                    raise ValueError(f"expected , or ] at offset {tok[2]}")
            return items
        if kind == "punct" and s == "{":
            obj = {}
            tok = next(tokens)
            while not (tok[0] == "punct" and tok[1] == "}"):
                if tok[0] == "string":
                    key = _unquote(tok[1])
                elif tok[0] == "name":
                    key = tok[1]
                else:
                    raise ValueError(f"bad object key at offset {tok[2]}")
                colon = next(tokens)
                if colon[1] != ":":
                    raise ValueError(f"expected : at offset {colon[2]}")
                if key in obj:
                    raise ValueError(f"duplicate key {key!r} at offset {tok[2]}")
                obj[key] = value(next(tokens))
                tok = next(tokens)
                if tok[0] == "punct" and tok[1] == ",":
                    tok = next(tokens)
                elif not (tok[0] == "punct" and tok[1] == "}"):
                    raise ValueError(f"expected , or }} at offset {tok[2]}")
            return obj
        if kind == "string":
            return _unquote(s)
        if kind == "number":
            return float(s) if any(c in s for c in ".eE") else int(s)
        if kind == "name" and s in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[s]
        raise ValueError(f"unexpected token {s!r} at offset {at}")

    return value(next(tokens))


def table(text: str, variable: str) -> list:
    """The array literal assigned by ``const <variable> = [...]``."""
    m = re.search(r"\bconst\s+" + re.escape(variable) + r"\s*=\s*\[", text)
    if m is None:
        raise ValueError(f"no 'const {variable} = [' in the file")
    return parse_literal(text, m.end() - 1)


# ---- Conformance tests -------------------------------------------------------------------------

def _is_dynamic(shape) -> bool:
    return any(not isinstance(d, int) for d in shape)


def _operand(spec: dict) -> dict:
    descriptor = spec["descriptor"]
    shape = spec.get("shape", descriptor["shape"])
    if _is_dynamic(shape):
        raise ValueError(f"no concrete shape for descriptor {descriptor}")
    out = {"dataType": descriptor["dataType"], "shape": shape, "data": spec["data"]}
    if _is_dynamic(descriptor["shape"]):
        out["descriptor_shape"] = descriptor["shape"]  # verbatim: {name, maxSize} dimensions
    if "constant" in spec:
        out["constant"] = spec["constant"]
    return out


def conformance(op: str, text: str, source: str) -> list[dict]:
    variable = f"{op}Tests"
    call = re.search(r"webnn_conformance_test\(\s*" + variable + r"\s*,\s*(\w+)\s*,\s*(\w+)\s*\)", text)
    if call is None:
        raise ValueError(f"{op}: no webnn_conformance_test({variable}, ...) call")
    builder, tolerance = call.group(1), call.group(2)
    cases = []
    for test in table(text, variable):
        graph = test["graph"]
        if len(graph["operators"]) != 1 or graph["operators"][0]["name"] != op:
            raise ValueError(f"{test['name']}: not a single {op} operator")
        operator = graph["operators"][0]
        arguments, options = {}, {}
        for arg in operator["arguments"]:
            (key, val), = arg.items()
            if key == "options":
                options = val
            else:
                arguments[key] = val
        if tuple(arguments) != OPERANDS[op]:
            raise ValueError(f"{test['name']}: arguments {tuple(arguments)} are not {OPERANDS[op]}")
        operands = {role: _operand(graph["inputs"][name]) for role, name in arguments.items()}
        outputs = graph["expectedOutputs"]
        if list(outputs) != [operator["outputs"]]:
            raise ValueError(f"{test['name']}: expected outputs {list(outputs)}")
        expected = _operand(outputs[operator["outputs"]])
        cases.append({"name": test["name"], "op": op, "operands": operands, "options": options,
                      "expected": expected, "tolerance": tolerance, "graph_builder": builder,
                      "source": source})
    return cases


# ---- Validation tests --------------------------------------------------------------------------

def _descriptor(spec: dict) -> dict:
    # Older files name the shape `dimensions`, newer ones `shape`.
    shape = spec["shape"] if "shape" in spec else spec["dimensions"]
    return {"dataType": spec["dataType"], "shape": shape}


def validation(op: str, text: str, source: str) -> tuple[list[dict], list[dict]]:
    # The harness sets options.axis only `if (test.axis)`: axis 0 is then the default.
    axis_if_truthy = re.search(r"if\s*\(\s*test\.axis\s*\)\s*\{?\s*options\.axis\s*=\s*test\.axis", text) is not None
    uses_axis = "test.axis" in text
    if uses_axis and not axis_if_truthy:
        raise ValueError(f"{op}: the harness passes test.axis in a way this script does not know")
    label = re.search(r"const label\s*=\s*'([^']*)'", text)
    cases = []
    for test in table(text, "tests"):
        operands = {role: _descriptor(test[role]) for role in OPERANDS[op]}
        options = {}
        if "axis" in test and test["axis"]:
            options["axis"] = test["axis"]
        case = {"name": test["name"], "op": op, "operands": operands, "options": options,
                "source": source}
        if "axis" in test and not test["axis"]:
            case["axis_in_table"] = test["axis"]  # written, but the harness does not pass it
        if "output" in test:
            case["expect"] = {"output": _descriptor(test["output"])}
        else:
            case["expect"] = {"error": "TypeError"}
            if label is not None:
                case["label"] = label.group(1)
        cases.append(case)
    multi = [{"name": name, "op": op, "source": source,
              "reason": "needs operands of two MLGraphBuilder objects (multi_builder_test); "
                        "multigather has no graph builder"}
             for name in re.findall(r"multi_builder_test\(.*?\},\s*'([^']*)'\);", text, re.DOTALL)]
    return cases, multi


def main(src: str) -> None:
    conf, val, multi, files = [], [], [], []
    for rel, repo, prefix, commit, chars, sha in SOURCES:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if len(text) != chars or digest != sha:
            raise SystemExit(f"{rel}: {len(text)} characters, sha256 {digest}; SOURCES says {chars}, {sha}")
        files.append({"file": rel, "repository": repo, "path": prefix + rel, "commit": commit,
                      "upstream": "web-platform-tests/wpt webnn/" + rel, "characters": chars,
                      "sha256": sha})
        source = rel  # a case's "source": its file's entry in "files"
        op = os.path.basename(rel).split(".")[0]
        if op not in OPS:
            raise SystemExit(f"{rel}: not one of {OPS}")
        if rel.startswith("conformance_tests/"):
            conf += conformance(op, text, source)
        else:
            cases, multis = validation(op, text, source)
            val += cases
            multi += multis
    doc = {
        "about": "WebNN web-platform-tests for gather, gatherElements, gatherND, scatterElements "
                 "and scatterND, converted by tests/python/upstream/webnn/convert_wpt.py from the "
                 "files listed in 'files' (copies of web-platform-tests/wpt as vendored by the "
                 "Chromium and Firefox trees; the upstream repository's own snapshot could not be "
                 "read: over the fetch size limit, and its indexed copy predates these files). "
                 "Values are the literals of the sources; nothing is computed.",
        "files": files,
        "conformance": conf,
        "validation": val,
        "multi_builder": multi,
    }
    text = json.dumps(doc, indent=1)
    # Lists of numbers (data, shapes) on one line each.
    text = re.sub(r"\[\s*([-0-9.eE,\s]*?)\s*\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",") if v.strip()) + "]", text)
    if json.loads(text) != doc:
        raise SystemExit("compacting the JSON changed it")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"{OUT}: {len(conf)} conformance, {len(val)} validation, {len(multi)} multi-builder cases")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
