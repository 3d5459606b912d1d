#include "graph/MixedPrecision.h"

#include <set>

namespace nhc {

int accumulate_in_data_types(Graph &g) {
    // ReduceMax/ReduceMin are left out: the extreme of 16-bit values is one of them, exact in
    // any type.
    static const std::set<std::string> accumulating = {
        "Softmax",    "LogSoftmax",      "LayerNormalization", "ReduceSum",
        "ReduceMean", "ReduceSumSquare", "ReduceL1",           "ReduceL2",
        "ReduceProd", "ReduceLogSum",    "ReduceLogSumExp"};
    int count = 0;
    for (Node &n : g.nodes) {
        if (!n.domain.empty() || !accumulating.count(n.op_type) || n.inputs.empty())
            continue;
        DType t = g.value(n.inputs[0]).dtype;
        if (t != DType::BFloat16 && t != DType::Float16)
            continue;
        n.attrs[kAccumulateInDataType] = int64_t(1);
        count++;
    }
    return count;
}

} // namespace nhc
