"""bench/model_steps.py's count of the bytes a region moves: each element of its inputs and outputs
once, whatever views of it the region takes or returns."""

import importlib.util
import pathlib

import torch

_spec = importlib.util.spec_from_file_location(
    "model_steps", pathlib.Path(__file__).resolve().parents[2] / "bench" / "model_steps.py")
model_steps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_steps)


def test_distinct_bytes_counts_views_and_expands_once():
    x = torch.zeros(8, 16)                    # 512 bytes
    row = torch.zeros(16).expand(8, 16)       # 64 bytes, read 8 times
    half = torch.zeros(8, 16, dtype=torch.bfloat16)[:, ::2]  # 128 distinct bytes over a span of 254
    got = model_steps.distinct_bytes(torch, [x, x.view(128), x, row, half, 3.0])
    assert got == 512 + 64 + 128
    # Another tensor over other bytes of x's storage counts: the halves of a split.
    top, bottom = x[:4], x[4:]
    assert model_steps.distinct_bytes(torch, [top, bottom]) == 512
