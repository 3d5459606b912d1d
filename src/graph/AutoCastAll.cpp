#include "graph/AutoCastAll.h"

#include "support/Error.h"

#include <algorithm>
#include <set>

namespace nhc {

namespace {

/** `c` in `t`, each element rounded to nearest even and saturated to the type's finite range.
 *  A constant within the range (a weight) is converted when first read, piece by piece as the
 *  NEFF writer reads it, without a copy held; one beyond it is converted here. */
std::shared_ptr<const HostTensor> cast_constant(const std::shared_ptr<const HostTensor> &c,
                                                DType t) {
    const double most = dtype_largest_finite(t);
    if (c->largest_magnitude() <= most)
        return std::make_shared<HostTensor>(HostTensor::converted_when_read(c, t));
    auto out = std::make_shared<HostTensor>(t, c->shape());
    for (int64_t i = 0; i < c->numel(); i++)
        out->set_f64(i, std::clamp(c->get_f64(i), -most, most)); // NaN stays NaN
    return out;
}

class AutoCastAll {
public:
    AutoCastAll(Graph &g, DType t) : g_(g), t_(t) {}

    int run() {
        std::set<std::string> interface(g_.inputs.begin(), g_.inputs.end());
        interface.insert(g_.outputs.begin(), g_.outputs.end());
        int count = 0;
        // Constants and computed values: stored in the cast type from here on.
        for (auto &[name, v] : g_.values) {
            if (v.dtype != DType::Float32 || interface.count(name))
                continue;
            if (v.is_constant())
                v.constant = cast_constant(v.constant, t_);
            v.dtype = t_;
            count++;
        }
        for (Node &n : g_.nodes)
            if (n.domain.empty() && (n.op_type == "Cast" || n.op_type == "CastLike") &&
                n.attr_int("to", 0) == dtype_to_onnx(DType::Float32) &&
                !interface.count(n.outputs[0]))
                n.attrs["to"] = int64_t(dtype_to_onnx(t_));
        cast_inputs();
        cast_outputs();
        return count;
    }

private:
    /** Each float32 graph input read by a node: a Cast to the type, which its readers read. */
    void cast_inputs() {
        std::vector<Node> casts;
        for (const std::string &in : g_.inputs) {
            if (g_.value(in).dtype != DType::Float32)
                continue;
            std::string cast = in + "__" + dtype_name(t_);
            bool read = false;
            for (Node &n : g_.nodes)
                for (std::string &x : n.inputs)
                    if (x == in) {
                        x = cast;
                        read = true;
                    }
            if (!read)
                continue;
            g_.values[cast] = Value{cast, t_, g_.value(in).shape, nullptr};
            casts.push_back(cast_node(in, cast, t_));
        }
        g_.nodes.insert(g_.nodes.begin(), casts.begin(), casts.end());
    }

    /** Each float32 graph output a node computes: computed in the type, then a Cast to float32.
     *  Other readers of it read the value in the type. */
    void cast_outputs() {
        std::set<std::string> inputs(g_.inputs.begin(), g_.inputs.end()), cast_outputs;
        for (const Node &n : g_.nodes)
            if (n.domain.empty() && (n.op_type == "Cast" || n.op_type == "CastLike"))
                cast_outputs.insert(n.outputs[0]); // writes its own type already
        for (const std::string &out : g_.outputs) {
            const Value &v = g_.value(out);
            if (v.dtype != DType::Float32 || v.is_constant() || inputs.count(out) ||
                cast_outputs.count(out))
                continue;
            std::string narrow = out + "__" + dtype_name(t_);
            if (g_.has_value(narrow))
                continue; // an output listed twice
            g_.values[narrow] = Value{narrow, t_, v.shape, nullptr};
            for (Node &n : g_.nodes) {
                for (std::string &x : n.inputs)
                    x = x == out ? narrow : x;
                for (std::string &x : n.outputs)
                    x = x == out ? narrow : x;
            }
            g_.nodes.push_back(cast_node(narrow, out, DType::Float32));
        }
    }

    static Node cast_node(const std::string &from, const std::string &to, DType t) {
        Node n;
        n.name = to + "__cast";
        n.op_type = "Cast";
        n.inputs = {from};
        n.outputs = {to};
        n.attrs["to"] = int64_t(dtype_to_onnx(t));
        return n;
    }

    Graph &g_;
    DType t_;
};

} // namespace

int auto_cast_all(Graph &g, DType cast_type) {
    nhc_assert(cast_type == DType::BFloat16 || cast_type == DType::Float16,
               "auto-cast all to " << dtype_name(cast_type));
    int count = AutoCastAll(g, cast_type).run();
    g.verify();
    return count;
}

} // namespace nhc
