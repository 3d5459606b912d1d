"""Single operators past the chip's capacity (issue 15, "every operator tiles past the chip's
capacity"): each is one PyTorch module at a size where a whole row, image or operand does not fit
on chip, exported like the models of torch_models.py (opset 17, float32 reference). The sizes are
those of the real models the operator comes from, or larger:

  softmax_vocab / log_softmax_vocab   a [128, 50257] row per token: GPT-2's vocabulary
  softmax_one_token                   the [1, 50257] logits of one generated token
  reduce_long                         sum, max and mean of rows of 262,144 elements
  layer_norm_wide                     LayerNorm over 16,384 features (rows of 64 KB in fp32)
  instance_norm_256                   InstanceNorm over 256 x 256 pixels per channel
  resize_256                          nearest x2 and bilinear x2 of a [1, 64, 256, 256] image
  concat_slice_big                    a channel Concat and a row Slice of [1, 256, 128, 128] images
  transpose_big                       the transpose of a [2048, 4096] activation
  matmul_odd                          [1000, 3000] @ [3000, 5000]: no tile divides M, K or N
  conv_transpose_128                  ConvTranspose 128 -> 64, 4 x 4, stride 2, on a 128 x 128 image
  conv_grouped_dilated                a ResNeXt-style grouped conv (32 groups of 8) and a dilated conv
  attention_s2048                     12 heads of attention over 2,048 positions, with a causal mask
  gather_elements / scatter_nd        torch.gather along rows; an indexed row assignment
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class Softmax(nn.Module):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def forward(self, x):
        return F.log_softmax(x, dim=-1) if self.log else F.softmax(x, dim=-1)


class ReduceLong(nn.Module):
    def forward(self, x):
        return x.sum(-1), x.amax(-1), x.mean(-1)


class ResizeBoth(nn.Module):
    def forward(self, x):
        return (F.interpolate(x, scale_factor=2.0, mode="nearest"),
                F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False))


class ConcatSlice(nn.Module):
    def forward(self, a, b):
        return torch.cat([a, b], dim=1), a[:, :, 10:100, :]


class TransposeBig(nn.Module):
    def forward(self, x):
        return x.t() * 2.0


class MatmulOdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3000, 5000) * 0.02)

    def forward(self, x):
        return x @ self.w


class GroupedDilated(nn.Module):
    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(256, 256, 3, padding=1, groups=32)
        self.dilated = nn.Conv2d(256, 128, 3, padding=2, dilation=2)

    def forward(self, x):
        return self.dilated(F.relu(self.grouped(x)))


class CausalAttention(nn.Module):
    """The attention of GPT-2's blocks (torch's export pattern: MatMul, Div, Where mask, Softmax,
    MatMul) over a sequence whose score rows exceed the fused schedule's on-chip rows."""

    def __init__(self, seq):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, q, k, v):
        scores = q @ k.transpose(-1, -2) / 8.0
        scores = torch.where(self.mask, scores, torch.tensor(-1e4))
        return torch.softmax(scores, dim=-1) @ v


class GatherElements(nn.Module):
    def forward(self, x, idx):
        return torch.gather(x, 1, idx)


class ScatterRows(nn.Module):
    def forward(self, x, rows, values):
        y = x.clone()
        y[rows] = values
        return y


def module(m, inputs, in_names, out_names):
    return lambda: (m(), inputs, in_names, out_names)


def ids(seed, high, *shape):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


SCATTER_ROWS = ids(7224, 4096, 300).unique()  # distinct rows: a repeated row's winner is unspecified

# name -> (seed, builder), as torch_models.MODELS. Seeds 7001.. seed the weights, 7201.. the inputs.
OPERATORS = {
    "softmax_vocab": (7001, module(lambda: Softmax(False), [randn(7201, 128, 50257)], ["x"], ["y"])),
    "log_softmax_vocab": (7002, module(lambda: Softmax(True), [randn(7202, 128, 50257)], ["x"], ["y"])),
    "softmax_one_token": (7015, module(lambda: Softmax(False), [randn(7215, 1, 50257)], ["x"], ["y"])),
    "reduce_long": (7003, module(ReduceLong, [randn(7203, 8, 262144)], ["x"], ["sum", "max", "mean"])),
    "layer_norm_wide": (7004, module(lambda: nn.LayerNorm(16384), [randn(7204, 256, 16384)], ["x"], ["y"])),
    "instance_norm_256": (7005, module(lambda: nn.InstanceNorm2d(64, affine=True),
                                       [randn(7205, 1, 64, 256, 256)], ["x"], ["y"])),
    "resize_256": (7006, module(ResizeBoth, [randn(7206, 1, 64, 256, 256)], ["x"], ["nearest", "bilinear"])),
    "concat_slice_big": (7007, module(ConcatSlice, [randn(7207, 1, 256, 128, 128), randn(7217, 1, 256, 128, 128)],
                                      ["a", "b"], ["cat", "slice"])),
    "transpose_big": (7008, module(TransposeBig, [randn(7208, 2048, 4096)], ["x"], ["y"])),
    "matmul_odd": (7009, module(MatmulOdd, [randn(7209, 1000, 3000)], ["x"], ["y"])),
    "conv_transpose_128": (7010, module(lambda: nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1),
                                        [randn(7210, 1, 128, 128, 128)], ["x"], ["y"])),
    "conv_grouped_dilated": (7011, module(GroupedDilated, [randn(7211, 1, 256, 56, 56)], ["x"], ["y"])),
    "attention_s2048": (7012, module(lambda: CausalAttention(2048),
                                     [randn(7212, 1, 12, 2048, 64), randn(7222, 1, 12, 2048, 64),
                                      randn(7232, 1, 12, 2048, 64)], ["q", "k", "v"], ["context"])),
    "gather_elements": (7013, module(GatherElements, [randn(7213, 4096, 512), ids(7223, 512, 4096, 256)],
                                     ["x", "index"], ["y"])),
    "scatter_nd": (7014, module(ScatterRows, [randn(7214, 4096, 512), SCATTER_ROWS,
                                              randn(7234, len(SCATTER_ROWS), 512)], ["x", "rows", "values"], ["y"])),
}
