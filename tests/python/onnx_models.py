"""Small real models exported to ONNX: the test material of a model rewrite (every gather/scatter
node of an exported model onto multigather's ops). A helper imported by tests, not a test file.

Each model is a ``torch.nn`` module in eval mode with a deterministic (seeded) example input,
built by its builder below:

    embedding_attention  nn.Embedding + one attention head (q, k, v Linear, softmax, output)
    mixture_of_experts   top-2 routing over 4 expert MLPs: the tokens of each expert gathered
                         (index_select), the expert outputs combined with index_add_, the
                         expert load and importance with scatter_add_
    graph_layer          message passing: x[src] (index_select), messages scatter_add_ into dst,
                         a scatter_reduce_(..., "amax", include_self=False) branch
    indexing             x[idx], x[:, idx], torch.gather, y[idx] = v, index_put_(accumulate=True)
    bert, gpt2, mixtral  transformers architectures built from tiny configs (no weights
                         downloaded: never from_pretrained; the hub is switched offline here),
                         their last_hidden_state on input_ids [2, 16] and an attention mask
                         (the second sequence padded); mixtral with 4 experts, top-2

``export(name, directory)`` exports one with ``torch.onnx.export(..., dynamo=True)`` (the
TorchScript exporter, ``dynamo=False``, only when the dynamo exporter fails for that model; the
exporter used is in ``export_info``) and returns the .onnx path and the ONNX Runtime feeds.
``gather_scatter_counts(model_proto)`` counts the gather/scatter nodes by op type.
"""

from __future__ import annotations

import json
import math
import os
import time

# transformers must never reach the network (no from_pretrained below; this guards its imports).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

GATHER_SCATTER_OPS = frozenset({"Gather", "GatherElements", "GatherND", "ScatterElements",
                                "ScatterND", "Scatter"})

MODELS = ["embedding_attention", "mixture_of_experts", "graph_layer", "indexing", "bert", "gpt2",
          "mixtral"]
# The models that need the transformers package.
TRANSFORMERS_MODELS = frozenset({"bert", "gpt2", "mixtral"})


# --------------------------------------------------------------------------------------------
# The models (torch is imported inside the builders: importing this module needs only numpy).

def _embedding_attention(vocab=100, dim=32, batch=2, seq=16):
    import torch
    from torch import nn

    class EmbeddingAttention(nn.Module):
        def __init__(self, vocab=100, dim=32):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)
            self.v = nn.Linear(dim, dim)
            self.out = nn.Linear(dim, dim)
            self.scale = 1.0 / math.sqrt(dim)

        def forward(self, ids):
            x = self.embed(ids)                                   # [B, S, D]
            q, k, v = self.q(x), self.k(x), self.v(x)
            scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            attn = torch.softmax(scores, dim=-1)
            return self.out(torch.matmul(attn, v)) + x

    torch.manual_seed(0)
    model = EmbeddingAttention(vocab, dim)
    ids = torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(1))
    return model, (ids,)


def _mixture_of_experts(dim=16, hidden=32, experts=4, batch=2, seq=8):
    import torch
    from torch import nn

    class MixtureOfExperts(nn.Module):
        """Top-2 routing over 4 expert MLPs, as the MoE layers of real models do it: the tokens
        routed to an expert are gathered (index_select), run through it, weighted and added back
        into their rows (index_add_); the expert load (tokens per expert) and importance (summed
        routing weights) of the load-balancing loss are scatter_add_ over the chosen experts.

        The tokens of expert e are its first ``tokens`` entries of a stable order that puts the
        (token, slot) pairs routed to e first: a fixed capacity (a token picks an expert at most
        once, so no expert gets more than ``tokens``); the filler rows past its count carry a zero
        weight. The shapes do not depend on the routing (what a static export needs)."""

        def __init__(self, dim=16, hidden=32, experts=4, top_k=2):
            super().__init__()
            self.experts_n = experts
            self.top_k = top_k
            self.router = nn.Linear(dim, experts, bias=False)
            self.experts = nn.ModuleList(
                nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
                for _ in range(experts))

        def forward(self, x):
            batch, seq, dim = x.shape
            tokens = x.reshape(-1, dim)                             # [T, D]
            count = tokens.shape[0]
            probs = torch.softmax(self.router(tokens), dim=-1)      # [T, E]
            weights, chosen = torch.topk(probs, self.top_k, dim=-1)  # [T, K]
            weights = weights / weights.sum(dim=-1, keepdim=True)
            flat_expert = chosen.reshape(-1)                        # [T*K]
            flat_weight = weights.reshape(-1)
            pair = torch.arange(flat_expert.shape[0], device=x.device)
            out = torch.zeros_like(tokens)
            for e, expert in enumerate(self.experts):
                mine = flat_expert == e
                # The pairs routed to e first, in pair order; its first T pairs (capacity T).
                order = torch.argsort((~mine).to(torch.int64) * pair.shape[0] + pair)[:count]
                token_index = torch.div(order, self.top_k, rounding_mode="floor")
                gathered = tokens.index_select(0, token_index)      # [T, D]
                gate = (flat_weight.gather(0, order) * mine.gather(0, order).to(x.dtype))
                out.index_add_(0, token_index, expert(gathered) * gate.unsqueeze(-1))
            load = torch.zeros(self.experts_n, dtype=torch.int64, device=x.device)
            load.scatter_add_(0, flat_expert, torch.ones_like(flat_expert))
            importance = torch.zeros(self.experts_n, dtype=x.dtype, device=x.device)
            importance.scatter_add_(0, flat_expert, flat_weight)
            return out.reshape(batch, seq, dim), load, importance

    torch.manual_seed(0)
    model = MixtureOfExperts(dim, hidden, experts)
    x = torch.randn(batch, seq, dim, generator=torch.Generator().manual_seed(1))
    return model, (x,)


def _graph_layer(features=8, hidden=16, nodes=10, edges=24):
    import torch
    from torch import nn

    class GraphLayer(nn.Module):
        """One message-passing layer: messages from x[src] (index_select), summed into their
        destination rows (scatter_add_), and their elementwise maximum (scatter_reduce_ amax,
        include_self=False: a node without incoming edges keeps its zero)."""

        def __init__(self, features=8, hidden=16):
            super().__init__()
            self.message = nn.Linear(features, hidden)
            self.update = nn.Linear(features, hidden)
            self.hidden = hidden

        def forward(self, x, edge_index):
            src, dst = edge_index[0], edge_index[1]
            messages = torch.relu(self.message(x.index_select(0, src)))   # [E, H]
            dst_rows = dst.unsqueeze(-1).expand(-1, self.hidden)
            summed = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype, device=x.device)
            summed.scatter_add_(0, dst_rows, messages)
            largest = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype, device=x.device)
            largest.scatter_reduce_(0, dst_rows, messages, "amax", include_self=False)
            return self.update(x) + summed + largest

    torch.manual_seed(0)
    model = GraphLayer(features, hidden)
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(nodes, features, generator=generator)
    # `edges` edges among `nodes` nodes; the last node receives none (its amax row stays zero).
    edge_index = torch.stack([torch.randint(0, nodes, (edges,), generator=generator),
                              torch.randint(0, nodes - 1, (edges,), generator=generator)])
    return model, (x, edge_index)


def _indexing(rows=6, width=8, picked=3, repeats=6):
    import torch
    from torch import nn

    class Indexing(nn.Module):
        """Advanced indexing as written in model code: x[idx], x[:, idx], torch.gather, an
        index_put (y[idx] = v, distinct rows) and an accumulating index_put_ (repeated rows)."""

        def forward(self, x, idx, cols, v, acc_idx, acc_v):
            rows = x[idx]                                   # [3, 8]
            columns = x[:, idx]                             # [6, 3]
            picked = torch.gather(x, 1, cols)               # [6, 2]
            y = x.clone()
            y[idx] = v                                      # index_put, distinct rows
            z = torch.zeros_like(x)
            z.index_put_((acc_idx,), acc_v, accumulate=True)  # repeated rows add up
            return rows, columns, picked, y, z

    generator = torch.Generator().manual_seed(1)
    x = torch.randn(rows, width, generator=generator)
    idx = torch.tensor([4, 0, 2]) if rows == 6 else torch.randperm(min(rows, width), generator=generator)[:picked]
    cols = torch.randint(0, width, (rows, 2), generator=generator)
    v = torch.randn(len(idx), width, generator=generator)
    acc_idx = torch.tensor([1, 3, 1, 5, 3, 1]) if rows == 6 else \
        torch.randint(0, rows, (repeats,), generator=generator)
    acc_v = torch.randn(len(acc_idx), width, generator=generator)
    return Indexing(), (x, idx, cols, v, acc_idx, acc_v)


class _LastHiddenState:
    """Wraps a transformers model so that forward returns last_hidden_state alone (a tensor, not
    a ModelOutput)."""

    @staticmethod
    def make(inner):
        from torch import nn

        class LastHiddenState(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  use_cache=False, return_dict=True).last_hidden_state

        return LastHiddenState().eval()


def _token_inputs(vocab: int, batch: int = 2, seq: int = 16):
    import torch
    generator = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, vocab, (batch, seq), generator=generator)
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    attention_mask[1, seq - 4:] = 0     # the second sequence padded
    return input_ids, attention_mask


def _bert(vocab=100, hidden=32, layers=2, heads=2, batch=2, seq=16):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=2 * hidden,
                        max_position_embeddings=max(32, seq),
                        type_vocab_size=2, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    model = BertModel(config, add_pooling_layer=False).eval()
    return _LastHiddenState.make(model), _token_inputs(vocab, batch, seq)


def _gpt2(vocab=100, hidden=32, layers=2, heads=2, batch=2, seq=16):
    import torch
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab, n_positions=max(32, seq), n_embd=hidden, n_layer=layers,
                        n_head=heads,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                        eos_token_id=0)
    model = GPT2Model(config).eval()
    return _LastHiddenState.make(model), _token_inputs(vocab, batch, seq)


def _mixtral(vocab=100, hidden=32, layers=2, heads=2, experts=4, batch=2, seq=16):
    import torch
    from transformers import MixtralConfig, MixtralModel
    torch.manual_seed(0)
    config = MixtralConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
                           num_hidden_layers=layers, num_attention_heads=heads,
                           num_key_value_heads=max(1, heads // 2),
                           max_position_embeddings=max(32, seq), num_local_experts=experts,
                           num_experts_per_tok=2, sliding_window=None)
    # The experts as "batched_mm": each (token, slot) pair gathers its expert's weights. The
    # default, "grouped_mm" (tokens sorted by expert, torch.histc, a grouped matmul), fails in
    # both exporters (dynamo: no ONNX function for transformers::grouped_mm_fallback;
    # TorchScript: aten::histc); "eager" (a loop over the experts hit, torch.where) fails in
    # torch.export (a guard on the data-dependent count of experts hit).
    config._experts_implementation = "batched_mm"
    model = MixtralModel(config).eval()
    return _LastHiddenState.make(model), _token_inputs(vocab, batch, seq)


_BUILDERS = {
    "embedding_attention": _embedding_attention,
    "mixture_of_experts": _mixture_of_experts,
    "graph_layer": _graph_layer,
    "indexing": _indexing,
    "bert": _bert,
    "gpt2": _gpt2,
    "mixtral": _mixtral,
}
assert list(_BUILDERS) == MODELS


# Sizes: "tiny" (the tests' models, the builders' defaults) and "medium" (bench/onnx_models.py:
# BERT / GPT-2 vocabularies, hidden 256, sequences of 128).
SIZES = {
    "tiny": {},
    "medium": {
        "embedding_attention": dict(vocab=30522, dim=256, batch=8, seq=128),
        "mixture_of_experts": dict(dim=256, hidden=512, experts=8, batch=8, seq=64),
        "graph_layer": dict(features=64, hidden=64, nodes=5000, edges=50000),
        "indexing": dict(rows=1024, width=256, picked=256, repeats=1024),
        "bert": dict(vocab=30522, hidden=256, layers=4, heads=4, batch=8, seq=128),
        "gpt2": dict(vocab=50257, hidden=256, layers=4, heads=4, batch=8, seq=128),
        "mixtral": dict(vocab=32000, hidden=256, layers=2, heads=4, experts=8, batch=2, seq=32),
    },
}


def build(name: str, size: str = "tiny"):
    """``(model, args)``: the model ``name`` in eval mode and its example input (a tuple of
    tensors), the same on every call (seeded); ``size``: a key of SIZES."""
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; the models: {', '.join(MODELS)}") from None
    model, args = builder(**SIZES[size].get(name, {}))
    return model.eval(), tuple(args)


def eager_outputs(model, args) -> list[np.ndarray]:
    """The model's eager outputs, flattened to a list of numpy arrays (ONNX output order)."""
    import torch
    with torch.no_grad():
        result = model(*args)
    if isinstance(result, torch.Tensor):
        result = (result,)
    return [t.detach().cpu().numpy() for t in result]


# --------------------------------------------------------------------------------------------
# Export.

def _paths(name: str, directory, size: str = "tiny") -> tuple[str, str, str]:
    base = os.path.join(os.fspath(directory), name if size == "tiny" else f"{name}.{size}")
    return base + ".onnx", base + ".feeds.npz", base + ".json"


def _write_atomic(path: str, write) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    write(temporary)
    os.replace(temporary, path)


def _export_with(exporter: str, model, args, path: str) -> None:
    import torch
    if exporter == "dynamo":
        torch.onnx.export(model, args, path, dynamo=True, external_data=False, verbose=False)
    else:
        torch.onnx.export(model, args, path, dynamo=False, verbose=False)


def _reason(error: Exception) -> str:
    """The exporter's error in a line or two: its first line and, where the dynamo exporter
    gives one, the first line of its exception summary (the actual cause)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reason = f"{type(error).__name__}: {lines[0] if lines else ''}"
    if "## Exception summary" in lines:
        after = lines[lines.index("## Exception summary") + 1:]
        if after:
            reason += " | " + after[0]
    return reason[:1000]


def export(name: str, directory, size: str = "tiny") -> tuple[str, dict[str, np.ndarray]]:
    """Exports the model ``name`` to ``directory/name.onnx`` (dynamo exporter; the TorchScript
    one only where dynamo fails) and returns ``(path, feeds)``: the .onnx path and the ONNX
    Runtime feeds (graph input name -> numpy array). Cached by name in ``directory``: a second
    call loads the feeds that the first wrote beside the model (name.feeds.npz; name.json holds
    the exporter used, see export_info)."""
    import onnx
    path, feeds_path, info_path = _paths(name, directory, size)
    if os.path.exists(path) and os.path.exists(feeds_path) and os.path.exists(info_path):
        with np.load(feeds_path) as stored:
            return path, {key: stored[key] for key in stored.files}
    os.makedirs(os.fspath(directory), exist_ok=True)
    model, args = build(name, size)
    errors = {}
    start = time.perf_counter()
    for exporter in ("dynamo", "torchscript"):
        temporary = f"{path}.{os.getpid()}.{exporter}.tmp"
        try:
            _export_with(exporter, model, args, temporary)
            break
        except Exception as error:  # the exporter's failure: try the next one
            errors[exporter] = _reason(error)
            if os.path.exists(temporary):
                os.remove(temporary)
    else:
        raise RuntimeError(f"export of {name} failed with both exporters: {errors}")
    seconds = time.perf_counter() - start
    proto = onnx.load(temporary)
    graph_inputs = [i.name for i in proto.graph.input
                    if i.name not in {init.name for init in proto.graph.initializer}]
    if len(graph_inputs) != len(args):
        raise RuntimeError(f"{name}: the ONNX graph has inputs {graph_inputs}, the example "
                           f"{len(args)} tensors")
    feeds = {key: t.detach().cpu().numpy() for key, t in zip(graph_inputs, args)}
    info = {"name": name, "exporter": exporter, "export_seconds": round(seconds, 3),
            "fallback_reason": errors.get("dynamo"),
            "opset": next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
                          None),
            "gather_scatter": gather_scatter_counts(proto), "nodes": len(proto.graph.node)}
    def write_feeds(target):
        with open(target, "wb") as f:  # a file object: np.savez would append .npz to a name
            np.savez(f, **feeds)

    def write_info(target):
        with open(target, "w") as f:
            json.dump(info, f, indent=1)

    _write_atomic(feeds_path, write_feeds)
    _write_atomic(info_path, write_info)
    os.replace(temporary, path)
    return path, feeds


def export_info(name: str, directory) -> dict:
    """What ``export(name, directory)`` recorded: the exporter used ("dynamo" or "torchscript"),
    why dynamo failed where it did (fallback_reason), the export time in seconds, the opset, the
    gather/scatter counts and the node count of the main graph."""
    with open(_paths(name, directory)[2]) as f:
        return json.load(f)


# --------------------------------------------------------------------------------------------
# Counting.

def _subgraphs(node):
    import onnx
    for attribute in node.attribute:
        if attribute.type == onnx.AttributeProto.GRAPH:
            yield attribute.g
        elif attribute.type == onnx.AttributeProto.GRAPHS:
            yield from attribute.graphs


def all_nodes(nodes):
    """The nodes and, after each, the nodes of its subgraphs (If/Loop/Scan), recursively."""
    for node in nodes:
        yield node
        for graph in _subgraphs(node):
            yield from all_nodes(graph.node)


def _count_nodes(nodes, counts: dict) -> None:
    for node in all_nodes(nodes):
        if node.domain in ("", "ai.onnx") and node.op_type in GATHER_SCATTER_OPS:
            counts[node.op_type] = counts.get(node.op_type, 0) + 1


def gather_scatter_counts(model_proto) -> dict[str, int]:
    """``op_type -> count`` of the nodes of the default (ONNX) domain whose op_type is one of
    Gather, GatherElements, GatherND, ScatterElements, ScatterND, Scatter: the main graph's, the
    subgraphs' of their If/Loop/Scan attributes (recursively), and the bodies' of the model's
    local functions (each function once, however often it is called). Ops absent are absent."""
    counts: dict[str, int] = {}
    _count_nodes(model_proto.graph.node, counts)
    for function in model_proto.functions:
        _count_nodes(function.node, counts)
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------------------------
# Running models (the rewrite's tests).

def library():
    """multigather's ONNX Runtime library, or None when the package was built without it
    (test_onnx_custom_ops.py says why, or fails under MULTIGATHER_EXPECT_ORT_LIBRARY=1)."""
    import multigather.onnx
    try:
        return multigather.onnx.custom_ops_library()
    except FileNotFoundError:
        return None


def session(model_proto, library_path=None, threads: int = 1):
    """An ONNX Runtime CPU session of ``model_proto`` at ``threads`` intra-op threads, with the
    custom-op library at ``library_path`` registered when given."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    if library_path:
        so.register_custom_ops_library(library_path)
    return ort.InferenceSession(model_proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
