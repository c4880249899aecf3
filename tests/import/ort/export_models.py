#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Export the small models that tests/import/ort/make_profile.sh runs under
# ONNX Runtime, with torch.onnx.export from Debian's python3-torch (no weights
# are downloaded: the weights are random, seeded, so every export is the
# same graph).
#
#   /usr/bin/python3 export_models.py OUT_DIR
#
# writes OUT_DIR/cnn.onnx and OUT_DIR/attn.onnx and prints one line per file.
#
#   cnn   a small image classifier: Conv, Relu, MaxPool, Conv, Relu,
#         GlobalAveragePool, Flatten, Gemm.  Input "image" [N,3,32,32].
#   attn  one pre-norm transformer block: LayerNormalization, MatMul, Add,
#         Transpose, Reshape, Softmax, Div, Erf-based GELU, residual Adds.
#         Input "tokens" [N,16,32].
#
# Both have a dynamic batch axis, so a run with another batch size shows a
# different input_type_shape in the profile.  Opset 17: the newest that
# torch 1.13 writes, and one every ONNX Runtime since 1.14 accepts.
import os
import sys

import torch
from torch import nn

# The shared model: tests/import/small_cnn.py.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
from small_cnn import SmallCNN  # noqa: E402


OPSET = 17


class TinyAttention(nn.Module):
    """One transformer block, written out op by op so the graph keeps
    MatMul/Add/Softmax instead of a fused attention node."""

    def __init__(self, dim=32, heads=2):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)

        def split(y):
            return y.reshape(n, t, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = torch.matmul(q, k.transpose(-2, -1)) / (self.head_dim ** 0.5)
        attn = torch.softmax(scores, dim=-1)
        y = torch.matmul(attn, v).transpose(1, 2).reshape(n, t, d)
        x = x + self.proj(y)
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


def export(model, example, input_name, path):
    model.eval()
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(
            model,
            example,
            tmp,
            input_names=[input_name],
            output_names=["out"],
            dynamic_axes={input_name: {0: "batch"}, "out": {0: "batch"}},
            opset_version=OPSET,
            do_constant_folding=True,
        )
    # Readers (another make_profile.sh on the same folder) never see a
    # half-written file.
    os.replace(tmp, path)
    print(f"exported {path} ({os.path.getsize(path)} bytes, opset {OPSET})")


def main():
    if len(sys.argv) != 2:
        print("usage: export_models.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(13)
    export(SmallCNN(), torch.randn(1, 3, 32, 32), "image",
           os.path.join(out_dir, "cnn.onnx"))
    export(TinyAttention(), torch.randn(1, 16, 32), "tokens",
           os.path.join(out_dir, "attn.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
