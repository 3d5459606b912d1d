#include "driver/TensorSizes.h"

#include "support/Error.h"

#include <cstdint>
#include <set>

namespace nhc {

namespace {

/** The largest element count a tensor may have: Halide indexes buffers with 32-bit integers. */
constexpr int64_t kMaxElements = INT32_MAX;

/** `v`'s size in bytes; NHC_EMOD026 if its element count overflows or passes kMaxElements. */
int64_t checked_bytes(const Value &v) {
    std::optional<int64_t> count = checked_numel(v.shape);
    if (!count)
        user_error("NHC_EMOD026", "tensor '", v.name, "' has shape ", shape_str(v.shape),
                   ", whose element count overflows a 64-bit integer");
    int64_t n = *count;
    if (n > kMaxElements)
        user_error("NHC_EMOD026", "tensor '", v.name, "' has shape ", shape_str(v.shape), ", ", n,
                   " elements; the code generator indexes at most ", kMaxElements,
                   " (32-bit indices): split it in the model (a smaller batch or sequence)");
    return n * dtype_size(v.dtype);
}

} // namespace

void check_tensor_sizes(const Graph &g, const target::TargetInfo &target) {
    std::set<std::string> io(g.inputs.begin(), g.inputs.end());
    io.insert(g.outputs.begin(), g.outputs.end());
    int64_t held = 0; // inputs, outputs and weights: in HBM for the whole run
    for (const auto &[name, v] : g.values) {
        // A tensor within kMaxElements has at most 8 GiB (4-byte elements), under any target's
        // HBM (nc.md:L211): only the sum can pass it.
        int64_t bytes = checked_bytes(v);
        if (io.count(name) || v.is_constant())
            held += bytes;
    }
    if (held > target.hbm_bytes_per_core)
        user_error("NHC_EMOD027", "the model's inputs, outputs and weights take ", held,
                   " bytes together; one NeuronCore of ", target.name, " addresses ",
                   target.hbm_bytes_per_core, " bytes of HBM");
}

} // namespace nhc
