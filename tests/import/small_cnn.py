# SPDX-License-Identifier: MIT
"""The small image classifier the importer's real artifacts are made with:
Conv, ReLU, MaxPool, Conv, ReLU, global average pool, flatten, Linear, on
[N, 3, 32, 32] images. Shared by tests/import/torch/make_trace.py (the
torch.profiler trace) and tests/import/ort/export_models.py (the ONNX model
ONNX Runtime profiles), so both tools profile the same network."""
import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)
