"""The op registry of the C++ library (multigather/registry.hpp): one name per framework gather
("onnx.GatherND", "torch.gather", "stablehlo.gather", ...), each lowered onto one
gather_multiaxis call by the frontends and run by the one pipeline (lower_op -> execute).
Python passes the arrays through (zero-copy) and the attributes as typed Python values (ints,
lists of ints, bools, floats, strings, None); the C++ registry checks their names and types.
"""

from __future__ import annotations

import inspect
import linecache
import sys
import textwrap
from typing import Any, Callable, Sequence

from . import _interop
from . import _jax_ffi
from . import _multigather as _core

#: Every registry op by name: family, signature, formula, source, attribute specs.
OPS: dict[str, dict] = {op["name"]: op for op in _core.registry_ops()}

#: The door (python/src/op_fast.cpp): run_op_fast(handle, input, indices, out, *attrs) (a
#: scatter op: handle, input, indices, updates, out, *attrs) with the attributes positionally in
#: the op's declaration order; NotImplemented only when no reader takes an operand as is (the
#: caller then normalizes it: run_general, _interop.call_door).
run_fast = _core.run_op_fast
#: Passed to run_fast for an attribute the caller did not give (the op's default applies).
DEFAULT = _core.default_attr

# op name -> (fast-path handle, attribute names in declaration order)
_FAST: dict[str, tuple[int, tuple[str, ...]]] = {}


def fast_op(op: str, *attr_names: str) -> int:
    """The run_fast handle of ``op``, whose attributes must be ``attr_names`` in declaration
    order (ValueError otherwise: a wrapper passes them positionally)."""
    return _core.op_handle(op, list(attr_names))


def _fast_entry(op: str) -> tuple[int, tuple[str, ...]] | None:
    entry = _FAST.get(op)
    if entry is None and op in OPS:
        names = tuple(a["name"] for a in OPS[op]["attrs"])
        entry = _FAST[op] = (fast_op(op, *names), names)
    return entry


def _wrapped(text: str) -> list[str]:
    """A paragraph of a docstring in lines of at most 96 characters (never breaking a word)."""
    return textwrap.wrap(text, 96, break_long_words=False, break_on_hyphens=False)


def row_doc(op: str) -> str:
    """The docstring part that registry row ``op`` states (the one place of these facts): the
    framework signature, the formula in docs/spec.md's notation, the framework's rules, the index
    rule, each attribute with its default and meaning, the equivalence class and the source
    document."""
    row = OPS[op]
    lines = [f"Registry op {op!r} ({row['kind']}, class {row['equivalence_class']}): {row['signature']}",
             f"    {row['formula']}",
             *_wrapped(f"Rules: {row['rules']}."),
             *_wrapped(f"Index rule: {row['index_rule']}.")]
    for a in row["attrs"]:
        default = f" = {a['default']}" if a["default"] != "" else ""
        choices = f" (one of {', '.join(a['choices'])})" if a["choices"] else ""
        lines.append(f"    {a['name']}{default}: {a['help']}{choices}")
    lines.append(f"Source: {row['source']}")
    return "\n".join(lines)


#: The errors of a registry op, as the C++ statuses map onto Python's exceptions (the row's
#: argument_error says which exception its invalid arguments raise: raises_text).
RAISES = ("Raises ValueError for shapes and attributes the framework rejects, TypeError for dtypes, "
          "IndexError where the index rule makes an index an error.")
#: The same for an op whose framework throws TypeError for every invalid argument (WebNN).
RAISES_ARGUMENT_TYPE_ERROR = (
    "Raises TypeError for every argument the framework rejects, as its API does: "
    "multigather.ArgumentTypeError (a TypeError that is also a ValueError) for shapes, ranks, axes "
    "and attributes, TypeError for dtypes; IndexError where the index rule makes an index an error.")


def raises_text(op: str) -> str:
    """The "Raises ..." paragraph of registry op ``op``'s wrappers, from its row's argument_error
    (ValueError, or ArgumentTypeError for WebNN's ops)."""
    if OPS[op].get("argument_error") == "ArgumentTypeError":
        return RAISES_ARGUMENT_TYPE_ERROR
    return RAISES


def _default(attr: dict) -> Any:
    """An attribute's default text (the row's AttrSpec) as the Python value a wrapper takes:
    int, None ("none"), a tuple of ints, a bool, an enum string or a number."""
    text, kind = attr["default"], attr["type"]
    if kind == "enum":
        return text  # "none" is a choice there (onnx's reduction)
    if text == "none":
        return None
    if kind in ("int", "int|none"):
        return int(text)
    if kind == "int list":
        return tuple(int(v) for v in text.strip("[]()").split(",") if v.strip())
    if kind == "bool":
        return text == "true"
    if kind in ("scalar", "scalar|none"):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text else number
    raise ValueError(f"attribute {attr['name']}: no Python default for type {kind}")


def function_parameters(op: str) -> list[tuple[str, Any]]:
    """The parameters of ``op_function(op)``, in order: the row's operand names (input, indices,
    updates for a scatter) without defaults (``inspect.Parameter.empty``), then every attribute
    with its typed default."""
    row = OPS[op]
    operands = [row["input_name"], row["indices_name"]]
    operands += [row["updates_name"]] if row["kind"] == "scatter" else []
    return ([(n, inspect.Parameter.empty) for n in operands] +
            [(a["name"], _default(a)) for a in row["attrs"]])


def signature_parameters(op: str) -> list[inspect.Parameter]:
    """The parameters of the framework's own function, in the order of the row's signature
    ("torch.gather(input, dim, index)"; a ``*`` makes the rest keyword-only, as the torch
    library's schemas read it: python/torch_library/multigather_torch.cpp, make_op), then the
    attributes the signature leaves out, keyword-only; an argument with a default in the
    signature (and those left out) takes the attribute's typed default."""
    row = OPS[op]
    text = row["signature"]
    body, depth, start, args = text[text.index("(") + 1:text.rindex(")")], 0, 0, []
    for i, c in enumerate(body + ","):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            if body[start:i].strip():
                args.append(body[start:i].strip())
            start = i + 1
    attrs = {a["name"]: a for a in row["attrs"]}
    params, keyword, listed = [], False, set()
    for arg in args:
        if arg == "*":
            keyword = True
            continue
        name = arg.split("=", 1)[0].strip()
        kind = inspect.Parameter.KEYWORD_ONLY if keyword else inspect.Parameter.POSITIONAL_OR_KEYWORD
        # A default where the framework's signature has one (torch.gather's dim has none);
        # ``out`` (the framework's out= form) is the caller's buffer, None by default.
        default = (None if name == "out" else _default(attrs[name]) if name in attrs and "=" in arg
                   else inspect.Parameter.empty)
        params.append(inspect.Parameter(name, kind, default=default))
        listed.add(name)
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=_default(attrs[a]))
               for a in attrs if a not in listed]
    return params


def function_doc(op: str, name: str) -> str:
    """The docstring of ``op_function(op, name)``: everything from the row."""
    return f"{name}: the registry op {op!r}, made from its row.\n\n{row_doc(op)}\n" + "\n".join(_wrapped(raises_text(op)))


def _defined(op: str, module: str, name: str, params: list[inspect.Parameter], body: str,
             namespace: dict[str, Any]) -> Callable[..., Any]:
    """The function ``def name(<params>):`` + ``body`` (generated source) in ``namespace``, with
    ``params`` as its __signature__: literal defaults in the source (what inspect.getsource shows),
    any other value by name (``_DEFAULTS[j]``). inspect.getsource finds the source (tests read
    the wrappers' calls from it)."""
    literal = (int, str, tuple, type(None))
    head: list[str] = []
    defaults: list[Any] = []
    for p in params:
        if p.kind is inspect.Parameter.KEYWORD_ONLY and "*" not in head:
            head.append("*")
        if p.default is inspect.Parameter.empty:
            head.append(p.name)
            continue
        head.append(f"{p.name}={p.default!r}" if isinstance(p.default, literal) else f"{p.name}=_DEFAULTS[{len(defaults)}]")
        defaults.append(p.default)
    namespace["_DEFAULTS"] = tuple(defaults)
    source = f"def {name}({', '.join(head)}):\n{body}"
    filename = f"<multigather.{op} {module}.{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    function.__qualname__ = name
    function.__signature__ = inspect.Signature(params)
    return function


def _torch_dispatch_function(op: str, name: str, module: str, dispatch: Any) -> Callable[..., Any]:
    """op_function's form for a gather row with a PyTorch op (the row's torch_op), given the
    torch dispatch (``dispatch``: multigather._torch_dispatch, passed in by multigather.torch so that
    this module imports nothing of torch's): the framework's parameter order
    (signature_parameters); eager calls take the fast path, then torch tensors that autograd or
    tracing can see go through ``torch.ops.multigather.<op>`` (differentiable), then the
    general path. Its docstring is a line; the family module's document() adds the row's facts,
    as to a hand-written wrapper."""
    row = spec(op)
    params = signature_parameters(op)
    operands = [row["input_name"], row["indices_name"]]
    declared = [a["name"] for a in row["attrs"]]  # the door's attribute order
    # The out= form (an ``out`` in the row's signature): the door writes into it; PyTorch's out=
    # overloads have no autograd, so the torch op (which has no out) is not taken then.
    has_out = any(p.name == "out" for p in params)
    schema = [p.name if p.kind is not inspect.Parameter.KEYWORD_ONLY else f"{p.name}={p.name}"
              for p in params if p.name != "out"]
    keywords = ", ".join((["out=out"] if has_out else []) + [f"{a}={a}" for a in declared])
    # call_op's arguments: the positional parameters, then the keyword-only ones by name.
    positional = [p.name for p in params if p.name != "out" and p.kind is not inspect.Parameter.KEYWORD_ONLY]
    named = [p.name for p in params if p.name != "out" and p.kind is inspect.Parameter.KEYWORD_ONLY]
    direct = (f"_d.call_op({'multigather::' + row['torch_op']!r}, ({', '.join(positional)},), "
              f"{'{' + ', '.join(f'{n!r}: {n}' for n in named) + '}' if named else 'None'})")
    # _d.is_compiling: torch.compiler.is_compiling once the torch ops are loaded (the module's
    # name is rebound then), which Dynamo folds to True while tracing.
    body = (f"    if not _d.is_compiling():  # eager calls; torch.compile traces the torch op below\n"
            f"        result = run_fast(_FAST, {', '.join(operands + ['out' if has_out else 'None'] + declared)})\n"
            f"        if result is not NotImplemented:\n"
            f"            return result\n"
            f"        # Torch tensors that only autograd must see: the torch op, through the dispatcher from C++.\n"
            f"        result = {direct if not has_out else 'NotImplemented if out is not None else ' + direct}\n"
            f"        if result is not NotImplemented:\n"
            f"            return result\n"
            f"    if {'out is None and ' if has_out else ''}torch_op_needed({', '.join(operands)}):\n"
            f"        return torch_ops().{row['torch_op']}({', '.join(schema)})\n"
            f"    return run_general({', '.join([repr(op)] + operands + ([keywords] if keywords else []))})\n")
    namespace: dict[str, Any] = {"__name__": module, "run_fast": run_fast, "run_general": run_general,
                                 "_d": dispatch, "torch_op_needed": dispatch.torch_op_needed,
                                 "torch_ops": dispatch.torch_ops, "_FAST": fast_op(op, *declared)}
    function = _defined(op, module, name, params, body, namespace)
    function.__doc__ = (f"{op}, made from its row (the framework's parameters). Torch tensors that autograd or "
                        f"tracing can see run ``torch.ops.multigather.{row['torch_op']}`` (differentiable in "
                        f"{operands[0]}).")
    function.fast_handles = {"_FAST": (op, declared)}
    return function


def op_function(op: str, name: str | None = None, torch_dispatch: Any = None) -> Callable[..., Any]:
    """The Python function of registry op ``op``, made from its row: parameters = the row's
    operand names and then its attributes with their typed defaults (positional or keyword, in
    the row's order), docstring = the row's facts (function_doc). The body is the hand-written
    wrappers' one, generated as source so that a call costs what theirs did: the fast path
    (run_fast, attributes positionally), then the general path (run_general; a scatter:
    run_scatter with the attributes as keywords). ``name`` defaults to the op's last component;
    ``__module__`` is the calling module's. ``torch_dispatch`` (multigather._torch_dispatch, for a
    gather row with a PyTorch op): the framework's parameters instead, and the torch op for
    what autograd or tracing sees (_torch_dispatch_function)."""
    row = spec(op)
    name = name or op.rsplit(".", 1)[-1]
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    if torch_dispatch is not None and row.get("torch_op") is not None and row["kind"] == "gather":
        return _torch_dispatch_function(op, name, module, torch_dispatch)
    params = function_parameters(op)
    operands = [n for n, d in params if d is inspect.Parameter.empty]
    attrs = [n for n, d in params if d is not inspect.Parameter.empty]
    namespace: dict[str, Any] = {"__name__": module, "run_fast": run_fast, "run_general": run_general,
                                 "run_scatter": run_scatter}
    keywords = ", ".join(f"{a}={a}" for a in attrs)
    args = ", ".join([repr(op)] + operands + ([keywords] if keywords else []))
    if row["kind"] == "scatter":
        body = f"    return run_scatter({args})\n"
    else:
        namespace["_FAST"] = fast_op(op, *attrs)
        body = (f"    result = run_fast(_FAST, {', '.join(operands + ['None'] + attrs)})\n"
                f"    if result is NotImplemented:\n"
                f"        result = run_general({args})\n"
                f"    return result\n")
    function = _defined(op, module, name, [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
                                            for n, d in params], body, namespace)
    function.__doc__ = function_doc(op, name)
    function.registry_op = op
    function.made_from_row = True  # document() leaves its docstring as it is
    # The fast-path handle the body names, as a module's `_FAST = fast_op(op, *attrs)` would.
    function.fast_handles = {} if row["kind"] == "scatter" else {"_FAST": (op, attrs)}
    return function


def registry_op_of(function: Any) -> str | None:
    """The registry op a wrapper function runs: the first registry op name among its constants
    (the op name it passes to run_general / run_scatter); None for a composition (embedding)."""
    for const in getattr(getattr(function, "__code__", None), "co_consts", ()):
        if isinstance(const, str) and const in OPS:
            return const
    return None


def document(namespace: dict, public: Sequence[str]) -> None:
    """Appends to each public wrapper of a family module (``namespace``: its globals) the facts
    of its registry row (row_doc), so that the module states none of them by hand: signature,
    formula, attributes and source come from the C++ row (multigather._multigather.registry_ops)."""
    for name in public:
        function = namespace[name]
        op = registry_op_of(function)
        if op is None or getattr(function, "made_from_row", False):
            continue
        doc = (function.__doc__ or "").rstrip()
        # Indented as the hand-written lines after the first (PEP 257), so that help() and
        # inspect.getdoc show one margin.
        rows = "\n".join("    " + line for line in [*row_doc(op).splitlines(), *_wrapped(raises_text(op))])
        function.__doc__ = f"{doc}\n\n{rows}" if doc else row_doc(op)
        function.registry_op = op


def torch_op_name(row_name: str) -> str | None:
    """The torch op of a registry row, as the row states it (OpSpec::torch_op, named by the
    C++ torch_op_name): torch.gather -> gather, torch_scatter.segment_coo ->
    torch_scatter_segment_coo, gather_multiaxis itself; None for a row without one (onnx.Gather,
    ...; torch.nn.functional.embedding_bag, whose op, a custom_op in multigather.torch_ops,
    registers its own fake and strategy). Read by multigather.torch_ops (handles, fake kernels)
    and multigather._dtensor (strategies)."""
    return OPS[row_name]["torch_op"] if row_name in OPS else None


def torch_op_rows() -> list[str]:
    """The registry rows with a PyTorch op (torch_op_name not None), in registry order."""
    return [name for name, op in OPS.items() if op["torch_op"] is not None]


def names() -> list[str]:
    """Every op of the registry, sorted."""
    return sorted(OPS)


def spec(op: str) -> dict:
    """The registry entry of ``op``; ValueError for an unknown op."""
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"unknown op '{op}' (known: {', '.join(names())})") from None


def is_scatter(op: str) -> bool:
    """Whether registry op ``op`` is a scatter (it takes updates)."""
    entry = OPS.get(op)
    return entry is not None and entry["kind"] == "scatter"


def run_general_call(op: str, input: Any, indices: Any, *, updates: Any = None, out: Any = None,
                     **attrs: Any) -> Any:
    """The fallback of ``multigather.run`` (the door, python/src/op_fast_bindings.cpp's run_door,
    calls it for every call its readers do not take as is): the registry's message for an
    unknown op, a missing or extra updates or an unknown attribute; JAX tracers through the XLA
    FFI; every other call normalized (_interop.call_door) and run through the door again."""
    if getattr(input, "requires_grad", False) or getattr(updates, "requires_grad", False):
        # registry ops run outside autograd: never a result silently without a grad_fn.
        _interop._no_grad_check(input if getattr(input, "requires_grad", False) else updates,
                                "input" if getattr(input, "requires_grad", False) else "updates")
    if updates is not None:
        return run_scatter_general(op, input, indices, updates, out, **attrs)
    return run_general(op, input, indices, out, **attrs)


#: run(op, input, indices, *, updates=None, out=None, **attrs): the door (multigather.run).
run = _core.run


def _door_attrs(op: str, attrs: dict, has_updates: bool) -> tuple[int, list[Any]]:
    """The door's handle of ``op`` and ``attrs`` in its declaration order (DEFAULT where not
    given). An unknown op, an attribute the op does not have, or updates given to a gather (or
    not given to a scatter) raise the registry's own message (lower_op's checks, which come
    before any lowering)."""
    entry = _FAST.get(op) or _fast_entry(op)
    if entry is None or is_scatter(op) != has_updates or any(k not in entry[1] for k in attrs):
        _core.lower_op_shape(op, [], "float32", [], "int64", attrs, [] if has_updates else None)
        raise ValueError(f"{op}: bad call")  # not reached: lower_op raised
    handle, names = entry
    return handle, [attrs.get(n, DEFAULT) for n in names]


def run_general(op: str, input: Any, indices: Any, out: Any = None, **attrs: Any) -> Any:
    """A gather op on any framework's arrays (the door's readers after normalization,
    _interop.call_door); JAX tracers (inside jit / grad / vmap / shard_map) through the XLA FFI
    (_jax_ffi)."""
    if _jax_ffi.traced(input, indices):
        return _jax_ffi.run(op, input, indices, None, out, attrs)
    handle, values = _door_attrs(op, attrs, False)
    return _interop.call_door(handle, input, indices, None, out, values)


def run_scatter(op: str, input: Any, indices: Any, updates: Any, out: Any = None,
                **attrs: Any) -> Any:
    """A scatter op on framework arrays; ``out`` may be ``input``. The door first (numpy arrays,
    lists, torch tensors, DLPack arrays: run_fast with the updates), else run_scatter_general."""
    entry = _FAST.get(op) or _fast_entry(op)
    if entry is not None:
        handle, names = entry
        if all(k in names for k in attrs):
            result = run_fast(handle, input, indices, updates, out, *[attrs.get(n, DEFAULT) for n in names])
            if result is not NotImplemented:
                return result
    return run_scatter_general(op, input, indices, updates, out, **attrs)


def run_scatter_general(op: str, input: Any, indices: Any, updates: Any, out: Any = None,
                        **attrs: Any) -> Any:
    """``run_general`` for a scatter op (JAX tracers through the XLA FFI)."""
    if _jax_ffi.traced(input, indices, updates):
        return _jax_ffi.run(op, input, indices, updates, out, attrs)
    handle, values = _door_attrs(op, attrs, True)
    return _interop.call_door(handle, input, indices, updates, out, values)


def _shape(values: Sequence[int] | None) -> list[int] | None:
    return None if values is None else [int(s) for s in values]


def output_shape(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
                 input_dtype: str, indices_dtype: str, updates_shape: Sequence[int] | None = None,
                 **attrs: Any) -> tuple[int, ...]:
    return tuple(_core.lower_op_shape(op, [int(s) for s in input_shape], input_dtype,
                                      [int(s) for s in indices_shape], indices_dtype, attrs,
                                      _shape(updates_shape)))


def explain(op: str, input_shape: Sequence[int], indices_shape: Sequence[int],
            input_dtype: str, indices_dtype: str, updates_shape: Sequence[int] | None = None,
            **attrs: Any) -> str:
    return _core.explain_op(op, [int(s) for s in input_shape], input_dtype,
                            [int(s) for s in indices_shape], indices_dtype, attrs,
                            _shape(updates_shape))
