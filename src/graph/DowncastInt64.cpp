#include "graph/DowncastInt64.h"

#include "support/Error.h"

#include <limits>

namespace nhc {

int downcast_int64(Graph &g) {
    int count = 0;
    for (auto &[name, v] : g.values) {
        if (v.dtype != DType::Int64)
            continue;
        v.dtype = DType::Int32;
        if (v.is_constant()) {
            auto t = std::make_shared<HostTensor>(DType::Int32, v.shape);
            for (int64_t i = 0; i < t->numel(); i++) {
                int64_t x = v.constant->get_i64(i);
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
