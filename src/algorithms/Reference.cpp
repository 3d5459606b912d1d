#include "algorithms/Reference.h"

#include "algorithms/Algorithm.h"
#include "support/Error.h"

#include <cstring>

namespace nhc::alg {

namespace {

// Buffers hold raw bytes; bfloat16 travels as its bits (UInt(16)) and is reinterpreted in the
// pipeline, since a Halide::Buffer of bfloat16 does not convert its elements when read by the JIT.
Halide::Type buffer_type(DType t) {
    return t == DType::BFloat16 ? Halide::UInt(16) : halide_type(t);
}

Halide::Buffer<> to_buffer(const HostTensor &t) {
    std::vector<int> sizes(t.shape().rbegin(), t.shape().rend());
    Halide::Buffer<> buf(buffer_type(t.dtype()), sizes);
    if (!t.bytes().empty()) // a tensor of no elements has no buffer memory to copy to
        std::memcpy(buf.data(), t.bytes().data(), t.bytes().size()); // dense, dim 0 innermost
    return buf;
}

HostTensor from_buffer(const Halide::Buffer<> &buf, DType dtype, const Shape &shape) {
    HostTensor t(dtype, shape);
    if (!t.bytes().empty())
        std::memcpy(t.mutable_bytes().data(), buf.data(), t.bytes().size());
    return t;
}

Tensor wrap(const Halide::Buffer<> &buf, const Value &v) {
    // A Func whose definition calls the buffer directly (the buffer is embedded in the pipeline).
    Halide::Func f(Namer(v.name)("buffer"));
    std::vector<Halide::Var> vars = Builder::vars(static_cast<int>(v.shape.size()));
    std::vector<Halide::Expr> args(vars.begin(), vars.end());
    Halide::Expr call = Halide::Internal::Call::make(buf, args);
    if (v.dtype == DType::BFloat16)
        call = Halide::reinterpret(Halide::BFloat(16), call);
    define(f, vars, call);
    return Tensor{f, v.shape, v.dtype};
}

} // namespace

std::map<std::string, HostTensor> run_reference(const Graph &g,
                                                const std::map<std::string, HostTensor> &inputs) {
    std::map<std::string, Halide::Buffer<>> buffers;
    for (const std::string &in : g.inputs) {
        auto it = inputs.find(in);
        nhc_assert(it != inputs.end(), "no value for graph input '" << in << "'");
        buffers[in] = to_buffer(it->second);
    }
    for (const auto &[name, v] : g.values)
        if (v.is_constant())
            buffers[name] = to_buffer(*v.constant);
    // An explicit portable target: the host target here enables AVX-512/AMX features that not
    // every machine running the tests has (../shared/reference/halide14.md §1).
    Halide::Target target("x86-64-linux-avx2-fma-f16c-sse41");
    for (const Node &node : g.nodes) {
        OpContext ctx{node, {}, {}, {}, g.opset};
        for (const std::string &in : node.inputs) {
            if (in.empty()) {
                ctx.inputs.emplace_back();
                ctx.constants.push_back(nullptr);
                continue;
            }
            const Value &v = g.value(in);
            ctx.inputs.push_back(wrap(buffers.at(in), v));
            ctx.constants.push_back(v.constant.get());
        }
        for (const std::string &out : node.outputs)
            ctx.outputs.push_back(out.empty() ? nullptr : &g.value(out));
        OpResult r = build_algorithm(ctx);
        for (size_t o = 0; o < r.outputs.size(); o++) {
            if (node.outputs[o].empty())
                continue;
            const Value &v = g.value(node.outputs[o]);
            std::vector<int> sizes(v.shape.rbegin(), v.shape.rend());
            Halide::Buffer<> buf(buffer_type(v.dtype), sizes);
            Halide::Func result = r.outputs[o].func;
            if (v.dtype == DType::BFloat16) {
                std::vector<Halide::Var> vars = Builder::vars(static_cast<int>(v.shape.size()));
                Halide::Func bits(Namer(v.name)("bits"));
                std::vector<Halide::Expr> args(vars.begin(), vars.end());
                define(
                    bits, vars,
                    Halide::reinterpret(Halide::UInt(16), args.empty() ? result() : result(args)));
                result = bits;
            }
            Halide::Pipeline pipeline(result);
            pipeline.set_jit_externs(host_jit_externs());
            pipeline.realize(buf, target);
            buffers[v.name] = buf;
        }
    }
    std::map<std::string, HostTensor> outs;
    for (const std::string &o : g.outputs) {
        const Value &v = g.value(o);
        outs[o] = from_buffer(buffers.at(o), v.dtype, v.shape);
    }
    return outs;
}

} // namespace nhc::alg
