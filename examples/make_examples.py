#!/usr/bin/env python3
"""Writes the example .npy files in examples/ (they are committed, so running the examples
needs no Python). Each example folder holds input.npy, indices.npy, expected.npy (computed here
with numpy, independently of multigather) and command.txt (the multigather arguments).

Run from anywhere: python3 examples/make_examples.py   (needs numpy)
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def write(name, input, indices, expected, args):
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    np.save(folder / "input.npy", input)
    np.save(folder / "indices.npy", indices)
    np.save(folder / "expected.npy", expected)
    (folder / "command.txt").write_text(
        f"run gather_multiaxis --input examples/{name}/input.npy "
        f"--indices examples/{name}/indices.npy {args}\n")


# 1. GatherElements along axis 0 (the seed's first example; numpy.take_along_axis).
input = np.array([[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]], dtype=np.int64)
indices = np.array([[3, 1, 1], [2, 0, 3]], dtype=np.int64)
write("elements_axis0", input, indices, np.take_along_axis(input, indices, axis=0), "--axes=0")

# 2. GatherND with 2-D coordinates (the seed's example): input [2,2,2], indices [[0,1],[1,0]]
#    folded into shape [1,2,1*2], axes 0,1 -> output [1,2,2] (rows input[0,1,:], input[1,0,:]).
input = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
coords = np.array([[0, 1], [1, 0]], dtype=np.int32)
indices = coords.reshape(1, 2, 2)
expected = input[coords[:, 0], coords[:, 1], :].reshape(1, 2, 2)
write("nd_axes01", input, indices, expected, "--axes=0,1")

# 3. (x, y) points into a batch of images: input [batch=2, y=3, x=4] = 100*b + 10*y + x,
#    indices [2, 2 points, 1*2] hold (x, y) pairs, so the coordinate order is axes 2,1.
b, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
input = (100 * b + 10 * y + x).astype(np.int32)
points = np.array([[[3, 0], [1, 2]], [[0, 1], [2, 2]]], dtype=np.int64)  # [batch, point, (x, y)]
indices = points.reshape(2, 2, 2)
expected = input[np.arange(2)[:, None], points[..., 1], points[..., 0]].reshape(2, 2, 1)
write("points_xy", input, indices, expected, "--axes=2,1")
