"""``multigather lower MODEL.onnx -o OUT.onnx`` and ``multigather explain MODEL.onnx``: the
command-line tool (tools/cli/cli.cpp) hands these two to this module, since the model rewrite
is written with onnx's own Python helpers (``multigather.onnx.lower_model``).

Exit codes as the tool's: 0 ok, 2 usage or a model the rewrite refuses (the message names the
node), 3 a file that cannot be read or written. A failed ``lower`` writes no output file.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

EXIT_USAGE, EXIT_IO = 2, 3


def _load(path: str):
    import onnx
    try:
        return onnx.load(path)
    except FileNotFoundError:
        raise OSError(f"{path}: no such file")
    except Exception as e:  # onnx raises DecodeError and others for a file that is not a model
        raise OSError(f"{path}: not an ONNX model ({type(e).__name__}: {e})")


def _lower(args) -> int:
    import onnx
    from ._onnx_model import lower_model
    model = _load(args.model)
    lowered = lower_model(model, inline=args.inline, report=True)
    for r in lowered.nodes:
        if not r.lowered:
            print(f"left as is: {r.graph}: {r.node} ({r.op_type}): {r.reason}", file=sys.stderr)
    for note in lowered.notes:
        print(f"note: {note}", file=sys.stderr)
    tmp = args.output + ".partial"
    try:
        onnx.save(lowered.model, tmp)
        os.replace(tmp, args.output)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise OSError(f"{args.output}: cannot write ({e.strerror or e})")
    print(lowered.summary())
    print(f"wrote {args.output}")
    return 0


def _explain(args) -> int:
    from ._onnx_model import explain_model, lower_model
    lowered = lower_model(_load(args.model), report=True)
    print(explain_model(lowered), end="")
    if args.svg:
        os.makedirs(args.svg, exist_ok=True)
        for i, r in enumerate(lowered.nodes):
            if not r.lowered:
                continue
            svg = r.explain(format="svg")
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", r.node)[:80]
            path = os.path.join(args.svg, f"{i:03d}_{name}.svg")
            with open(path, "w") as f:
                f.write(svg)
            print(f"wrote {path}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="multigather", description="Whole ONNX models on the one operator")
    sub = parser.add_subparsers(dest="command", required=True)
    lower = sub.add_parser("lower", help="rewrite a model's gathers and scatters onto multigather's two ops")
    lower.add_argument("model", help="the ONNX model (.onnx)")
    lower.add_argument("-o", "--output", required=True, help="the rewritten model (.onnx)")
    lower.add_argument("--inline", action="store_true",
                       help="write the standard-ONNX bodies in place of the nodes (runtimes without functions)")
    explain = sub.add_parser("explain", help="what each gather / scatter node of a model lowers to")
    explain.add_argument("model", help="the ONNX model (.onnx)")
    explain.add_argument("--svg", metavar="DIR", help="also draw each lowered node into DIR/NNN_NODE.svg")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    from ._onnx_model import ModelError
    try:
        return _lower(args) if args.command == "lower" else _explain(args)
    except ModelError as e:
        print(f"multigather {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"multigather {args.command}: error: {e}", file=sys.stderr)
        return EXIT_IO
    except Exception as e:  # onnx.checker.ValidationError, shape inference errors
        print(f"multigather {args.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
