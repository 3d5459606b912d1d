#!/usr/bin/env python3
"""Generates the benchmark models of issue 5 into bench/out/ (not committed; random weights from
fixed seeds, so a rebuild is byte-identical):

  matmul_2048/model.onnx     one MatMul, A [2048, 2048] @ B [2048, 2048], both runtime inputs
  matmul_4096x8192x8192/     the same, A [4096, 8192] @ B [8192, 8192] (the NKI expert kernel's shape)
  matmul_2048_bf16/, matmul_4096x8192x8192_bf16/
                             the same two with bf16 inputs and output, as the NKI kernel reads and
                             writes them (the float ones cross HBM in fp32 under --auto-cast)
  matmul_1024x8192x1024_bf16/, matmul_512x4096x2048_bf16/
                             MatMuls whose K is long beside M and N (the K-blocked plan's shapes,
                             issue 16's two-stage K reduction), bf16 inputs and output
  bert_embedding_b{1,8}/      BERT-base's word-embedding lookup: Gather of a [30522, 768] table by
                             int64 token ids [batch, 128] (batch 1 and 8)
  bert_base_layer/model.onnx a BERT-base encoder layer: hidden 768, 12 heads, FFN 3072, erf GELU,
                             post-LayerNorm (eps 1e-12), batch 8, sequence 128, the op pattern of
                             PyTorch's export (MatMul + Add bias, Reshape/Transpose heads, Div by
                             sqrt(64), Softmax, decomposed erf-GELU)

and the real-size models of issue 15 from bench/torch_models.py (PyTorch export, float32
references in test_data_set_0/): resnet50, mobilenet_v2, efficientnet_b0, vit_b_16 (224²),
bert_base_b1/_b8 (12 layers, sequence 128), bert_24_layers_b1 (the same with 24 layers, for
compile-time scaling), gpt2_small_s128/_s1024 (12 layers, vocabulary 50,257),
sd_unet_64 (a Stable-Diffusion-style UNet on a 64² latent) and sd_unet_64_einsum (the same
weights, its attention written with torch.einsum as Stable Diffusion's own code does); and, by name only (--only), the
single operators past the chip's capacity of bench/operator_models.py (softmax_vocab, ...).

usage: /usr/bin/python3 bench/make_bench_models.py [--only NAME,NAME] [OUT_DIR]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, out, name):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def matmul(out, name, m, k, n, dtype=TensorProto.FLOAT):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"], name="matmul")], name,
        [helper.make_tensor_value_info("a", dtype, [m, k]),
         helper.make_tensor_value_info("b", dtype, [k, n])],
        [helper.make_tensor_value_info("c", dtype, [m, n])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out, name)


def matmul_2048(out):
    matmul(out, "matmul_2048", 2048, 2048, 2048)


def bert_base_layer(out, batch=8, seq=128, hidden=768, heads=12, ffn=3072):
    rng = np.random.default_rng(5002)
    d = hidden // heads
    inits, nodes = [], []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, value, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def linear(x, n_in, n_out, prefix):
        y = node("MatMul", [x, weight(prefix + ".weight", (n_in, n_out), n_in ** -0.5)], prefix + "/MatMul")
        return node("Add", [weight(prefix + ".bias", (n_out,), 0.02), y], prefix + "/Add")

    def layer_norm(x, prefix):
        return node("LayerNormalization", [x, weight(prefix + ".weight", (hidden,), 1.0),
                                           weight(prefix + ".bias", (hidden,), 0.02)],
                    prefix + "/LayerNormalization", axis=-1, epsilon=1e-12)

    heads_shape = const("heads_shape", [batch, seq, heads, d])
    def split_heads(x, prefix, perm):
        r = node("Reshape", [x, heads_shape], prefix + "/Reshape")
        return node("Transpose", [r], prefix + "/Transpose", perm=perm)

    x = "hidden_states"
    q = split_heads(linear(x, hidden, hidden, "attn.query"), "attn.q", [0, 2, 1, 3])
    k = split_heads(linear(x, hidden, hidden, "attn.key"), "attn.k", [0, 2, 3, 1])
    v = split_heads(linear(x, hidden, hidden, "attn.value"), "attn.v", [0, 2, 1, 3])
    s = node("MatMul", [q, k], "attn/MatMul")
    s = node("Div", [s, const("sqrt_d", np.float32(d ** 0.5), np.float32)], "attn/Div")
    p = node("Softmax", [s], "attn/Softmax", axis=-1)
    c = node("MatMul", [p, v], "attn/MatMul_1")
    c = node("Transpose", [c], "attn/Transpose", perm=[0, 2, 1, 3])
    c = node("Reshape", [c, const("merged_shape", [batch, seq, hidden])], "attn/Reshape")
    a = linear(c, hidden, hidden, "attn.out")
    a = node("Add", [a, x], "attn/residual")
    ln1 = layer_norm(a, "attn_ln")
    h = linear(ln1, hidden, ffn, "inter")
    g = node("Div", [h, const("sqrt2", np.float32(2 ** 0.5), np.float32)], "act/Div")
    g = node("Erf", [g], "act/Erf")
    g = node("Add", [g, const("one", np.float32(1), np.float32)], "act/Add")
    g = node("Mul", [h, g], "act/Mul")
    g = node("Mul", [g, const("half", np.float32(0.5), np.float32)], "act/Mul_1")
    o = linear(g, ffn, hidden, "out")
    o = node("Add", [o, ln1], "out/residual")
    y = layer_norm(o, "out_ln")
    graph = helper.make_graph(
        nodes, "bert_base_layer",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, seq, hidden])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [batch, seq, hidden])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out, "bert_base_layer")


def bert_embedding(out, batch, seq=128, vocab=30522, hidden=768):
    rng = np.random.default_rng(5003)
    table = (rng.standard_normal((vocab, hidden)) * 0.02).astype(np.float32)
    name = "bert_embedding_b%d" % batch
    graph = helper.make_graph(
        [helper.make_node("Gather", ["word_embeddings", "input_ids"], ["embedded"],
                          name="/embeddings/word_embeddings/Gather")], name,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("embedded", TensorProto.FLOAT, [batch, seq, hidden])],
        [numpy_helper.from_array(table, "word_embeddings")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out, name)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?", default=os.path.join(here, "out"))
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    onnx_models = {"matmul_2048": matmul_2048, "bert_base_layer": bert_base_layer,
                   # issue 16's large MatMul (the NKI expert kernel's shape)
                   "matmul_4096x8192x8192": lambda out: matmul(out, "matmul_4096x8192x8192",
                                                               4096, 8192, 8192),
                   "matmul_2048_bf16": lambda out: matmul(out, "matmul_2048_bf16", 2048, 2048,
                                                          2048, TensorProto.BFLOAT16),
                   "matmul_4096x8192x8192_bf16": lambda out: matmul(
                       out, "matmul_4096x8192x8192_bf16", 4096, 8192, 8192, TensorProto.BFLOAT16),
                   "matmul_1024x8192x1024_bf16": lambda out: matmul(
                       out, "matmul_1024x8192x1024_bf16", 1024, 8192, 1024, TensorProto.BFLOAT16),
                   "matmul_512x4096x2048_bf16": lambda out: matmul(
                       out, "matmul_512x4096x2048_bf16", 512, 4096, 2048, TensorProto.BFLOAT16),
                   "bert_embedding_b1": lambda out: bert_embedding(out, 1),
                   "bert_embedding_b8": lambda out: bert_embedding(out, 8)}
    names = args.only.split(",") if args.only else None
    torch_models = None
    if names is None or any(n not in onnx_models for n in names):
        sys.path.insert(0, here)
        import torch_models  # needs python3-torch and python3-torchvision
        import operator_models
        torch_models_and_operators = dict(torch_models.MODELS, **operator_models.OPERATORS)
    for name in names or list(onnx_models) + list(torch_models.MODELS):
        if name in onnx_models:
            onnx_models[name](args.out)
        elif name in torch_models_and_operators:
            torch_models.export(name, args.out, torch_models_and_operators)
        else:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(list(onnx_models) + list(torch_models_and_operators))))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
