#include "runtime/HostSegment.h"

#include "frontend/ConstantEvaluator.h"
#include "graph/HostTensor.h"
#include "runtime/Numerics.h"
#include "support/Error.h"

#include <cstring>
#include <limits>
#include <onnx/onnx_pb.h>
#include <optional>

namespace nhc::rt {

using neff::DType;

std::optional<DType> carrier_dtype(nhc::DType t, bool *holds_bool) {
    *holds_bool = t == nhc::DType::Bool;
    switch (t) {
    case nhc::DType::Float32:
        return DType::F32;
    case nhc::DType::Float16:
        return DType::F16;
    case nhc::DType::BFloat16:
        return DType::BF16;
    case nhc::DType::Int64:
    case nhc::DType::Int32:
        return DType::I32;
    case nhc::DType::Int16:
        return DType::I16;
    case nhc::DType::Int8:
        return DType::I8;
    case nhc::DType::UInt8:
    case nhc::DType::Bool:
        return DType::U8;
    case nhc::DType::UInt16:
        return DType::U16;
    case nhc::DType::UInt32:
        return DType::U32;
    case nhc::DType::Float64:
        return DType::F64;
    case nhc::DType::UInt64:
        return DType::U64;
    default:
        return std::nullopt;
    }
}

namespace {

bool is_integer(DType t) {
    return t == DType::I8 || t == DType::U8 || t == DType::I16 || t == DType::U16 ||
           t == DType::I32 || t == DType::U32;
}

int64_t read_int(DType t, const uint8_t *p) {
    switch (t) {
    case DType::I8:
        return int8_t(*p);
    case DType::U8:
        return *p;
    case DType::I16: {
        int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case DType::U16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case DType::I32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    }
}

/** Writes `v` as `t`; false when it does not fit. */
bool write_int(DType t, uint8_t *p, int64_t v) {
    auto put = [&](auto typed) {
        using T = decltype(typed);
        if (v < int64_t(std::numeric_limits<T>::min()) ||
            v > int64_t(std::numeric_limits<T>::max()))
            return false;
        T x = T(v);
        std::memcpy(p, &x, sizeof x);
        return true;
    };
    switch (t) {
    case DType::I8:
        return put(int8_t());
    case DType::U8:
        return put(uint8_t());
    case DType::I16:
        return put(int16_t());
    case DType::U16:
        return put(uint16_t());
    case DType::I32:
        return put(int32_t());
    default:
        return put(uint32_t());
    }
}

/** Whether the runtime type `t` is the host type `h` byte for byte (64-bit values are carried
 *  in their own type, so they cross without conversion). */
bool same_bytes(DType t, nhc::DType h) {
    return (t == DType::F64 && h == nhc::DType::Float64) ||
           (t == DType::U64 && h == nhc::DType::UInt64);
}

HostTensor to_host(const Tensor &t, nhc::DType as) {
    HostTensor h(as, t.shape);
    if (same_bytes(t.dtype, as)) {
        h.mutable_bytes() = t.data;
        return h;
    }
    size_t es = size_t(neff::dtype_size(t.dtype));
    for (int64_t i = 0; i < h.numel(); i++) {
        const uint8_t *p = t.data.data() + size_t(i) * es;
        if (is_integer(t.dtype))
            h.set_i64(i, read_int(t.dtype, p));
        else
            h.set_f64(i, double(load_elem(t.dtype, p)));
    }
    return h;
}

/** `h` in the runtime type `dt`; false when an integer does not fit it. */
bool to_runtime(const HostTensor &h, DType dt, Tensor *out) {
    out->dtype = dt;
    out->shape = h.shape();
    if (same_bytes(dt, h.dtype())) {
        ByteView bytes = h.bytes();
        out->data.assign(bytes.data(), bytes.data() + bytes.size());
        return true;
    }
    size_t es = size_t(neff::dtype_size(dt));
    out->data.assign(size_t(h.numel()) * es, 0);
    for (int64_t i = 0; i < h.numel(); i++) {
        uint8_t *p = out->data.data() + size_t(i) * es;
        if (dt == DType::F64) {
            double v = h.get_f64(i);
            std::memcpy(p, &v, sizeof v);
        } else if (dt == DType::U64) {
            if (!dtype_is_float(h.dtype()) && h.get_i64(i) < 0)
                return false;
            uint64_t v =
                dtype_is_float(h.dtype()) ? uint64_t(h.get_f64(i)) : uint64_t(h.get_i64(i));
            std::memcpy(p, &v, sizeof v);
        } else if (!is_integer(dt))
            store_elem(dt, p, float(h.get_f64(i)));
        else if (!write_int(dt, p,
                            dtype_is_float(h.dtype()) ? int64_t(h.get_f64(i)) : h.get_i64(i)))
            return false;
    }
    return true;
}

/** The host evaluators compute integers in int64 (frontend/ConstantEvaluator.h), where a uint64
 *  of 2^63 or more would compare and divide as a negative number: NHC_ERT024 rather than a
 *  wrong answer. */
void check_uint64_range(const HostTensor &t, const std::string &name) {
    if (t.dtype() != nhc::DType::UInt64)
        return;
    for (int64_t i = 0; i < t.numel(); i++)
        if (t.get_i64(i) < 0)
            user_error("NHC_ERT024", "uint64 input '", name, "' holds ", uint64_t(t.get_i64(i)),
                       " at element ", i,
                       "; the host computes integers in int64 and takes uint64 values below 2^63");
}

[[noreturn]] void refuse(const std::string &file, const std::string &what) {
    user_error("NHC_ENEFF015", "host segment '", file, "' of the partitioned NEFF: ", what);
}

} // namespace

struct HostSegment::State {
    onnx::ModelProto model;
    int opset = 0;
    std::map<std::string, HostTensor> initializers;
    std::map<std::string, nhc::DType> onnx_types; ///< of the inputs and outputs
};

HostSegment::~HostSegment() = default;

int HostSegment::node_count() const {
    return state_->model.graph().node_size();
}

std::shared_ptr<const HostSegment> HostSegment::load(const std::vector<uint8_t> &bytes,
                                                     const std::string &file) {
    std::shared_ptr<HostSegment> seg(new HostSegment());
    seg->state_ = std::make_unique<State>();
    State &s = *seg->state_;
    if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
        !s.model.ParseFromArray(bytes.data(), int(bytes.size())))
        refuse(file, "not an ONNX model");
    for (const auto &o : s.model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            s.opset = int(o.version());
    const onnx::GraphProto &g = s.model.graph();
    seg->name_ = g.name();
    for (const auto &n : g.node())
        if (!can_evaluate(n.op_type()) || !(n.domain().empty() || n.domain() == "ai.onnx"))
            refuse(file, "node " + n.op_type() + " '" + n.name() + "' has no host evaluator");
    for (const auto &t : g.initializer())
        s.initializers[t.name()] = HostTensor::from_onnx(t, t.name());
    auto add = [&](const onnx::ValueInfoProto &vi, neff::VarKind kind) {
        const auto &tt = vi.type().tensor_type();
        std::optional<nhc::DType> dt = dtype_from_onnx(tt.elem_type());
        neff::Variable v;
        v.name = vi.name();
        v.kind = kind;
        std::optional<DType> carried = dt ? carrier_dtype(*dt, &v.holds_bool) : std::nullopt;
        if (!carried)
            refuse(file, "value '" + vi.name() + "' has ONNX element type " +
                             std::to_string(tt.elem_type()) + ", which no runtime type carries");
        v.dtype = *carried;
        for (const auto &d : tt.shape().dim())
            v.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
        s.onnx_types[v.name] = *dt;
        seg->io_.push_back(v);
    };
    for (const auto &vi : g.input())
        add(vi, neff::VarKind::Input);
    for (const auto &vi : g.output())
        add(vi, neff::VarKind::Output);
    return seg;
}

std::map<std::string, Tensor> HostSegment::run(const std::map<std::string, Tensor> &inputs) const {
    const State &s = *state_;
    std::map<std::string, HostTensor> values = s.initializers;
    for (const neff::Variable &v : io_) {
        if (v.kind != neff::VarKind::Input)
            continue;
        auto given = inputs.find(v.name);
        nhc_assert(given != inputs.end(),
                   "host segment '" << name_ << "' runs without its input '" << v.name << "'");
        values[v.name] = to_host(given->second, s.onnx_types.at(v.name));
        check_uint64_range(values[v.name], v.name);
    }
    for (const auto &n : s.model.graph().node()) {
        std::vector<const HostTensor *> in;
        for (const auto &name : n.input()) {
            auto it = values.find(name);
            if (!name.empty() && it == values.end())
                user_error("NHC_ERT024", "host segment '", name_, "': ", n.op_type(), " '",
                           n.name(), "' reads '", name, "', which nothing before it computes");
            in.push_back(name.empty() ? nullptr : &it->second);
        }
        std::optional<std::vector<HostTensor>> out;
        try {
            // If's and Loop's subgraphs read the segment's values they capture.
            out = evaluate_node_in_scope(n, in, s.opset, [&](const std::string &name) {
                auto v = values.find(name);
                return v == values.end() ? nullptr : &v->second;
            });
        } catch (const UserError &e) {
            user_error("NHC_ERT024", "host segment '", name_, "': ", e.what());
        }
        if (!out)
            user_error("NHC_ERT024", "host segment '", name_, "': ", n.op_type(), " '", n.name(),
                       "' cannot be evaluated on these inputs (an attribute form the host does "
                       "not implement, an output over ",
                       kMaxFoldedElements, " elements, or a MatMul or Gemm over ",
                       kMaxHostMultiplyAdds, " multiply-adds)");
        for (size_t i = 0; i < out->size() && i < size_t(n.output_size()); i++)
            if (!n.output(int(i)).empty())
                values[n.output(int(i))] = std::move((*out)[i]);
    }
    std::map<std::string, Tensor> outputs;
    for (const neff::Variable &v : io_) {
        if (v.kind != neff::VarKind::Output)
            continue;
        auto it = values.find(v.name);
        if (it == values.end())
            user_error("NHC_ERT024", "host segment '", name_, "': no node computes output '",
                       v.name, "'");
        if (!to_runtime(it->second, v.dtype, &outputs[v.name]))
            user_error("NHC_ERT024", "host segment '", name_, "': output '", v.name,
                       "' holds a value that ", neff::dtype_name(v.dtype),
                       " (its type at run time) cannot hold");
    }
    return outputs;
}

} // namespace nhc::rt
