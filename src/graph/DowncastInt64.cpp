#include "graph/DowncastInt64.h"

#include "support/Error.h"

#include <algorithm>
#include <limits>
#include <map>

namespace nhc {

namespace {

/** The constants that only Slice nodes read, and only as starts or ends: ONNX clamps those to
 *  the sliced dimension, so a value past int32 (PyTorch writes `x[:, 2:]`'s end as INT64_MAX)
 *  slices the same when saturated to int32. */
std::map<std::string, bool> slice_bounds_only(const Graph &g) {
    std::map<std::string, bool> only;
    for (const Node &n : g.nodes)
        for (size_t i = 0; i < n.inputs.size(); i++) {
            bool bound = n.op_type == "Slice" && n.domain.empty() && (i == 1 || i == 2);
            auto [it, fresh] = only.emplace(n.inputs[i], bound);
            it->second = (fresh || it->second) && bound;
        }
    return only;
}

} // namespace

int downcast_int64(Graph &g) {
    int count = 0;
    std::map<std::string, bool> saturate = slice_bounds_only(g);
    for (auto &[name, v] : g.values) {
        if (v.dtype != DType::Int64)
            continue;
        v.dtype = DType::Int32;
        if (v.is_constant()) {
            auto t = std::make_shared<HostTensor>(DType::Int32, v.shape);
            for (int64_t i = 0; i < t->numel(); i++) {
                int64_t x = v.constant->get_i64(i);
                if (saturate[name])
                    x = std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(),
                                            std::numeric_limits<int32_t>::max());
                if (x < std::numeric_limits<int32_t>::min() ||
                    x > std::numeric_limits<int32_t>::max())
                    user_error("NHC_EDTY002", "int64 constant '", name, "' holds ", x,
                               " at element ", i,
                               ", which does not fit the int32 that the "
                               "NeuronCore computes with");
                t->set_i64(i, x);
            }
            v.constant = t;
        }
        count++;
    }
    for (Node &n : g.nodes)
        if (n.op_type == "Cast" && n.domain.empty() && n.attr_int("to", 0) == 7 /* INT64 */)
            n.attrs["to"] = int64_t(6); // INT32
    return count;
}

} // namespace nhc
