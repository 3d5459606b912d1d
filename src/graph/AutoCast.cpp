#include "graph/AutoCast.h"

#include "support/Error.h"
#include "support/SmallFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace nhc {

namespace {

// The converted copy of a constant, shared by every node that reads it; converted when its bytes
// are first read (the NEFF writer, a piece at a time, for most weights).
std::string cast_constant(Graph &g, const std::string &name, DType t) {
    std::string cast_name = name + "__" + dtype_name(t);
    if (g.has_value(cast_name))
        return cast_name;
    const Value &v = g.value(name);
    // float -> bf16/fp16 rounds to nearest even
    auto c = std::make_shared<HostTensor>(HostTensor::converted_when_read(v.constant, t));
    g.values[cast_name] = Value{cast_name, t, v.shape, c};
    return cast_name;
}

// Ops that only move elements (reshape or permute): a value read through them is still read by
// whoever reads their output, in the same element type.
bool is_view(const Node &n) {
    static const std::set<std::string> views = {"Reshape",   "Flatten",  "Squeeze",
                                                "Unsqueeze", "Identity", "Transpose"};
    return n.domain.empty() && views.count(n.op_type) != 0;
}

// Nodes whose first two inputs are contraction operands on the PE: MatMul, Gemm and
// graph/ConvIm2Col's ConvTaps.
bool contracts_on_pe(const Node &n) {
    return (n.domain.empty() && (n.op_type == "MatMul" || n.op_type == "Gemm")) ||
           (n.domain == "nhc" && n.op_type == "ConvTaps");
}

class NarrowOperandFinder {
public:
    NarrowOperandFinder(const Graph &g, DType cast_type) : cast_type_(cast_type) {
        for (const Node &n : g.nodes)
            for (size_t i = 0; i < n.inputs.size(); i++)
                readers_[n.inputs[i]].push_back({&n, i});
        outputs_.insert(g.outputs.begin(), g.outputs.end());
    }

    /** True when every read of `name`, directly or through views, is a matmul operand that
     *  rounds to the cast type; collects the views' outputs into `chain`. */
    bool only_cast_operands(const std::string &name, std::vector<std::string> &chain) const {
        if (outputs_.count(name))
            return false;
        auto it = readers_.find(name);
        if (it == readers_.end())
            return false;
        for (const auto &[node, index] : it->second) {
            bool matmul = contracts_on_pe(*node) && node->operand_cast == cast_type_ && index < 2;
            if (matmul)
                continue;
            if (!is_view(*node) || index != 0)
                return false;
            chain.push_back(node->outputs[0]);
            if (!only_cast_operands(node->outputs[0], chain))
                return false;
        }
        return true;
    }

private:
    DType cast_type_;
    std::map<std::string, std::vector<std::pair<const Node *, size_t>>> readers_;
    std::set<std::string> outputs_;
};

/** MatMul(x[M, K], W[K, N]) of a float32 constant W, with nothing the graph passes added (a
 *  folded Transpose, causal bounds) and not kept in fp32 (Resize's interpolation): a linear
 *  layer without a bias, which is Gemm(x, W). */
bool is_plain_2d_matmul_by_constant(const Graph &g, const Node &n) {
    if (!n.domain.empty() || n.op_type != "MatMul" || n.inputs.size() != 2 || !n.attrs.empty() ||
        !n.input_perm.empty() || n.keep_precision)
        return false;
    const Value &x = g.value(n.inputs[0]), &w = g.value(n.inputs[1]);
    return x.shape.size() == 2 && w.shape.size() == 2 && w.is_constant() &&
           w.dtype == DType::Float32;
}

/** w / scale rounded to fp8_e4m3; |w| <= largest, so no element passes 240 (beyond it is NaN). */
HostTensor quantized_fp8(const HostTensor &w, float scale) {
    HostTensor q(DType::Float8E4M3, w.shape());
    const ByteView from = w.bytes();
    std::vector<uint8_t> &to = q.mutable_bytes();
    const float top = static_cast<float>(kFp8E4M3Max);
    for (size_t i = 0; i < to.size(); i++) {
        float x;
        std::memcpy(&x, from.data() + 4 * i, 4);
        to[i] = f32_to_fp8e4m3(std::clamp(x / scale, -top, top));
    }
    return q;
}

} // namespace

int store_matmul_operands_narrow(Graph &g, DType cast_type) {
    NarrowOperandFinder finder(g, cast_type);
    std::vector<std::string> narrowed;
    for (const Node &n : g.nodes) {
        if (is_view(n))
            continue; // a view's output is narrowed with the value it views, or not at all
        for (const std::string &out : n.outputs) {
            std::vector<std::string> chain;
            if (out.empty() || g.value(out).dtype != DType::Float32 ||
                !finder.only_cast_operands(out, chain))
                continue;
            narrowed.push_back(out);
            narrowed.insert(narrowed.end(), chain.begin(), chain.end());
        }
    }
    for (const std::string &name : narrowed)
        g.values[name].dtype = cast_type;
    return static_cast<int>(narrowed.size());
}

int take_stored_16bit_operands(Graph &g) {
    int count = 0;
    for (Node &n : g.nodes) {
        if (!contracts_on_pe(n) || n.operand_cast || n.inputs.size() < 2)
            continue;
        DType a = g.value(n.inputs[0]).dtype, b = g.value(n.inputs[1]).dtype;
        if (a != b || (a != DType::BFloat16 && a != DType::Float16))
            continue;
        n.operand_cast = a;
        count++;
    }
    return count;
}

int store_linear_weights_fp8(Graph &g) {
    std::map<std::string, float> scale_of; // weight -> its scale, for weights two Gemms read
    std::set<std::string> sources;
    int count = 0;
    for (Node &n : g.nodes) {
        if (is_plain_2d_matmul_by_constant(g, n))
            n.op_type = "Gemm"; // the same product, with an alpha to carry the scale
        const bool gemm = n.domain.empty() && n.op_type == "Gemm";
        const bool conv = n.domain == "nhc" && n.op_type == "ConvTaps"; // weight: input 1
        if (!(gemm || conv) || n.keep_precision)
            continue;
        for (size_t i = conv ? 1 : 0; i < 2 && i < n.inputs.size(); i++) {
            const Value &v = g.value(n.inputs[i]);
            if (!v.is_constant() || v.dtype != DType::Float32)
                continue;
            const std::string cast_name = n.inputs[i] + "__" + dtype_name(DType::Float8E4M3);
            if (!scale_of.count(cast_name)) {
                // NaNs stay NaN in fp8 and do not set the scale.
                const double largest = v.constant->largest_magnitude();
                if (largest == 0.0 || std::isinf(largest)) // no scale fits: bf16 takes it
                    continue;
                float scale = static_cast<float>(largest) / static_cast<float>(kFp8E4M3Max);
                auto q = std::make_shared<HostTensor>(quantized_fp8(*v.constant, scale));
                g.values[cast_name] = Value{cast_name, DType::Float8E4M3, v.shape, q};
                scale_of[cast_name] = scale;
                count++;
            }
            n.attrs["alpha"] = n.attr_float("alpha", 1.0) * scale_of[cast_name];
            sources.insert(n.inputs[i]);
            n.inputs[i] = cast_name;
        }
    }
    // A float32 weight nothing reads any more leaves the graph (its bytes with it).
    std::set<std::string> read(g.outputs.begin(), g.outputs.end());
    for (const Node &n : g.nodes)
        read.insert(n.inputs.begin(), n.inputs.end());
    for (const std::string &name : sources)
        if (!read.count(name))
            g.values.erase(name);
    return count;
}

int auto_cast_matmuls(Graph &g, DType cast_type) {
    nhc_assert(cast_type == DType::BFloat16 || cast_type == DType::Float16 ||
                   cast_type == DType::TFloat32,
               "auto-cast to " << dtype_name(cast_type));
    // Reads of each value (graph outputs count as one): a float constant nothing reads once its
    // readers take the converted copy leaves the graph there and then. Its bytes stay as long as
    // the copy's conversion is pending (HostTensor::converted_when_read shares them): the float
    // weights are then the model file's or the folded ones, and no converted copy is held.
    std::map<std::string, int> reads;
    for (const Node &n : g.nodes)
        for (const std::string &in : n.inputs)
            reads[in]++;
    for (const std::string &out : g.outputs)
        reads[out]++;
    int count = 0;
    for (Node &n : g.nodes) {
        if (!contracts_on_pe(n) || n.keep_precision)
            continue;
        n.operand_cast = cast_type;
        for (size_t i = 0; i < 2 && i < n.inputs.size(); i++) {
            const Value &v = g.value(n.inputs[i]);
            if (!v.is_constant() || v.dtype != DType::Float32)
                continue;
            const std::string from = n.inputs[i];
            n.inputs[i] = cast_constant(g, from, cast_type);
            reads[n.inputs[i]]++;
            if (--reads[from] == 0)
                g.values.erase(from);
        }
        count++;
    }
    return count;
}

} // namespace nhc
