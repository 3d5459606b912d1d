"""The real-size models of issue 15, exported by PyTorch's own exporter (torch.onnx.export, opset 17,
static shapes, eval mode) with random weights from fixed seeds, and a PyTorch float32 reference in
ONNX's backend-test layout:

  OUT/<name>/model.onnx
  OUT/<name>/test_data_set_0/input_<i>.pb   named after graph input i
  OUT/<name>/test_data_set_0/output_<i>.pb  torch float32 reference for graph output i

Vision models are torchvision's own architectures (weights=None). BERT and GPT-2 reuse the
HF-style modules of ../shared/models/make_dev_models.py, so the exported op patterns are those the
development models already carry, at full size.
"""
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "models"))
import make_dev_models as dev  # noqa: E402  (BertModel, GPT2Block, ResBlock, randomize_norm_stats)


class GPT2Model(nn.Module):
    """GPT-2: token + position embeddings, N pre-LN blocks, final LayerNorm, LM head tied to the
    token embedding (logits over the whole vocabulary)."""

    def __init__(self, vocab, hidden, layers, heads, max_pos=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))
        self.blocks = nn.ModuleList([dev.GPT2Block(hidden, heads, max_pos) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids):
        x = self.wte(input_ids) + self.wpe(self.position_ids[:, : input_ids.size(1)])
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


class SelfAttention2d(nn.Module):
    """Stable Diffusion's spatial self-attention: GroupNorm, tokens = pixels, multi-head attention
    over them, output projection, residual."""

    def __init__(self, ch, heads, groups, einsum=False):
        super().__init__()
        self.h, self.d = heads, ch // heads
        self.norm = nn.GroupNorm(groups, ch, eps=1e-6)
        self.qkv = nn.Linear(ch, 3 * ch)
        self.proj = nn.Linear(ch, ch)
        self.einsum = einsum

    def forward(self, x):
        b, c, hh, ww = x.shape
        t = self.norm(x).reshape(b, c, hh * ww).permute(0, 2, 1)
        q, k, v = self.qkv(t).split(c, dim=2)
        q, k, v = (z.reshape(b, hh * ww, self.h, self.d).permute(0, 2, 1, 3) for z in (q, k, v))
        if self.einsum:  # as Stable Diffusion's original code writes it (ldm's CrossAttention)
            q, k, v = (z.reshape(b * self.h, hh * ww, self.d) for z in (q, k, v))
            sim = torch.einsum("b i d, b j d -> b i j", q, k) / math.sqrt(self.d)
            o = torch.einsum("b i j, b j d -> b i d", F.softmax(sim, dim=-1), v)
            o = o.reshape(b, self.h, hh * ww, self.d)
        else:
            w = F.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d), dim=-1)
            o = torch.matmul(w, v)
        o = o.permute(0, 2, 1, 3).reshape(b, hh * ww, c)
        return x + self.proj(o).permute(0, 2, 1).reshape(b, c, hh, ww)


class SDUNet(nn.Module):
    """A Stable-Diffusion-style UNet on a 4-channel latent: GroupNorm(32) + SiLU residual blocks,
    stride-2 convolutions down, nearest upsampling + convolution up, skip concatenations, and
    self-attention at the lowest resolution (down, mid and up)."""

    def __init__(self, cin=4, ch=(128, 256, 512), groups=32, heads=8, einsum=False):
        super().__init__()
        c0, c1, c2 = ch
        self.conv_in = nn.Conv2d(cin, c0, 3, padding=1)
        self.down0 = dev.ResBlock(c0, c0, groups)
        self.ds0 = nn.Conv2d(c0, c0, 3, stride=2, padding=1)
        self.down1 = dev.ResBlock(c0, c1, groups)
        self.ds1 = nn.Conv2d(c1, c1, 3, stride=2, padding=1)
        self.down2 = dev.ResBlock(c1, c2, groups)
        self.down2_attn = SelfAttention2d(c2, heads, groups, einsum)
        self.mid0 = dev.ResBlock(c2, c2, groups)
        self.mid_attn = SelfAttention2d(c2, heads, groups, einsum)
        self.mid1 = dev.ResBlock(c2, c2, groups)
        self.up2 = dev.ResBlock(c2 + c2, c2, groups)
        self.up2_attn = SelfAttention2d(c2, heads, groups, einsum)
        self.up1_conv = nn.Conv2d(c2, c2, 3, padding=1)
        self.up1 = dev.ResBlock(c2 + c1, c1, groups)
        self.up0_conv = nn.Conv2d(c1, c1, 3, padding=1)
        self.up0 = dev.ResBlock(c1 + c0, c0, groups)
        self.norm_out = nn.GroupNorm(groups, c0)
        self.conv_out = nn.Conv2d(c0, cin, 3, padding=1)

    def forward(self, x):
        s0 = self.down0(self.conv_in(x))                       # H,   c0
        s1 = self.down1(self.ds0(s0))                          # H/2, c1
        s2 = self.down2_attn(self.down2(self.ds1(s1)))         # H/4, c2
        m = self.mid1(self.mid_attn(self.mid0(s2)))
        u = self.up2_attn(self.up2(torch.cat([m, s2], dim=1)))
        u = self.up1_conv(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.up1(torch.cat([u, s1], dim=1))                 # H/2, c1
        u = self.up0_conv(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.up0(torch.cat([u, s0], dim=1))                 # H,   c0
        return self.conv_out(F.silu(self.norm_out(u)))


class Detector(nn.Module):
    """An SSD-style detector for host fallback (issue 18): ResNet-18's stem and first two stages
    as the backbone (stride 8: 28 x 28 locations at 224^2), a box and a score head per location,
    then the post-processing the device cannot run: TopK of the scores and NonMaxSuppression
    (torchvision.ops.nms) of the top boxes, whose count is known only at run time."""

    def __init__(self, top_k=300, iou=0.5, stride=8):
        super().__init__()
        import torchvision.models as tvm
        r = tvm.resnet18(weights=None)
        self.backbone = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2)
        self.box = nn.Conv2d(128, 4, 3, padding=1)
        self.score = nn.Conv2d(128, 1, 3, padding=1)
        self.top_k, self.iou, self.stride = top_k, iou, stride

    def forward(self, x):
        import torchvision
        f = self.backbone(x)
        h, w = f.shape[2], f.shape[3]
        t = self.box(f).flatten(2)[0].t()  # [h * w, 4]: centre offsets, log sizes
        ys = (torch.arange(h, dtype=torch.float32) + 0.5) * self.stride
        xs = (torch.arange(w, dtype=torch.float32) + 0.5) * self.stride
        anchors = torch.stack([xs.view(1, w).expand(h, w).reshape(-1),
                               ys.view(h, 1).expand(h, w).reshape(-1)], 1)
        centre = anchors + torch.tanh(t[:, :2]) * self.stride
        size = torch.exp(t[:, 2:].clamp(max=4.0)) * 3 * self.stride
        boxes = torch.cat([centre - size / 2, centre + size / 2], 1)
        scores = torch.sigmoid(self.score(f).flatten())
        top, idx = scores.topk(self.top_k)
        top_boxes = boxes[idx]
        keep = torchvision.ops.nms(top_boxes, top, self.iou)
        return top_boxes[keep], top[keep]


def detector():
    def build():
        return Detector(), image(6210), ["image"], ["boxes", "scores"]
    return build


def image(seed, hw=224):
    return [torch.randn(1, 3, hw, hw, generator=torch.Generator().manual_seed(seed))]


def token_ids(seed, batch, seq, vocab):
    return torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(seed))


def bert_base(batch, layers=12):
    def build():
        m = dev.BertModel(vocab=30522, hidden=768, layers=layers, heads=12, ffn=3072)
        ids = token_ids(6101, batch, 128, 30522)
        mask = torch.ones(batch, 128, dtype=torch.int64)
        mask[:, 100:] = 0  # padded tail, so the additive mask matters
        types = torch.zeros(batch, 128, dtype=torch.int64)
        return m, [ids, mask, types], ["input_ids", "attention_mask", "token_type_ids"], \
            ["last_hidden_state", "pooler_output"]
    return build


def gpt2_small(seq):
    def build():
        m = GPT2Model(vocab=50257, hidden=768, layers=12, heads=12)
        return m, [token_ids(6102, 1, seq, 50257)], ["input_ids"], ["logits"]
    return build


def torchvision_model(ctor, seed):
    def build():
        import torchvision.models as tvm
        model = getattr(tvm, ctor)(weights=None)
        # torchvision starts ViT's classification head at zero: every output would be 0 and any
        # compiled model would match it. Such layers get the usual small random weights.
        for layer in model.modules():
            if isinstance(layer, torch.nn.Linear) and not layer.weight.any():
                torch.nn.init.normal_(layer.weight, std=0.02)
        return model, image(seed), ["input"], ["output"]
    return build


def sd_unet(einsum=False):
    def build():
        x = torch.randn(1, 4, 64, 64, generator=torch.Generator().manual_seed(6103))
        return SDUNet(einsum=einsum), [x], ["latent"], ["output"]
    return build


# name -> (seed, builder). Seeds 6001.. seed the weights; inputs have their own fixed seeds.
MODELS = {
    "resnet50": (6001, torchvision_model("resnet50", 6201)),
    "mobilenet_v2": (6002, torchvision_model("mobilenet_v2", 6202)),
    "efficientnet_b0": (6003, torchvision_model("efficientnet_b0", 6203)),
    "vit_b_16": (6004, torchvision_model("vit_b_16", 6204)),
    "bert_base_b1": (6005, bert_base(1)),
    "bert_base_b8": (6006, bert_base(8)),
    # BERT-base's shape with 24 layers: issue 16's compile-time scaling (24 layers vs 12).
    "bert_24_layers_b1": (6007, bert_base(1, layers=24)),
    "gpt2_small_s128": (6007, gpt2_small(128)),
    "gpt2_small_s1024": (6008, gpt2_small(1024)),
    "sd_unet_64": (6009, sd_unet()),
    # The same weights, its attention written with torch.einsum: Einsum as MatMul (issue 18).
    "sd_unet_64_einsum": (6009, sd_unet(einsum=True)),
    # TopK + NonMaxSuppression after a CNN backbone: issue 18's host fallback.
    "detector_nms": (6010, detector()),
}


def write_tensors(folder, kind, names, tensors):
    for i, (n, t) in enumerate(zip(names, tensors)):
        proto = numpy_helper.from_array(t.detach().numpy(), name=n)
        with open(os.path.join(folder, "%s_%d.pb" % (kind, i)), "wb") as f:
            f.write(proto.SerializeToString())


def export(name, out, registry=None):
    """Writes OUT/<name>/ for an entry of registry (MODELS by default): model.onnx and its
    test_data_set_0/ of inputs and torch float32 reference outputs."""
    seed, build = (registry or MODELS)[name]
    torch.manual_seed(seed)
    model, inputs, in_names, out_names = build()
    dev.randomize_norm_stats(model, seed + 500)
    model.eval()
    folder = os.path.join(out, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    t0 = time.time()
    with torch.no_grad():
        ref = model(*inputs)
        ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    # Exported with gradients on: nn.MultiheadAttention (ViT) takes its fused inference fast path,
    # which the exporter cannot translate, only when no parameter needs a gradient.
    torch.onnx.export(model, tuple(inputs), os.path.join(folder, "model.onnx"), opset_version=17,
                      do_constant_folding=True, input_names=in_names, output_names=out_names)
    write_tensors(data, "input", in_names, inputs)
    write_tensors(data, "output", out_names, [r.float() for r in ref])
    print("%-18s %5.1f s  %s" % (name, time.time() - t0, folder), flush=True)
