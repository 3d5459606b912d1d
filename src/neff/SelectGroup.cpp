#include "neff/SelectGroup.h"

#include "support/Error.h"

#include <algorithm>

namespace nhc::codegen {

neff::DType isa_dtype_of(DType t, const std::string &value) {
    switch (t) {
    case DType::Float32:
        return neff::DType::F32;
    case DType::TFloat32:
        return neff::DType::TF32;
    case DType::Float16:
        return neff::DType::F16;
    case DType::BFloat16:
        return neff::DType::BF16;
    case DType::Float8E4M3:
        return neff::DType::FP8E4M3;
    case DType::Int8:
        return neff::DType::I8;
    case DType::UInt8:
    case DType::Bool:
        return neff::DType::U8;
    case DType::Int16:
        return neff::DType::I16;
    case DType::UInt16:
        return neff::DType::U16;
    case DType::Int32:
        return neff::DType::I32;
    case DType::UInt32:
        return neff::DType::U32;
    default:
        user_error("NHC_EGEN006", "tensor '", value, "' has type ", dtype_name(t),
                   ", which the NeuronCore engines cannot hold (64-bit types are not supported)");
    }
}

std::vector<SelectedInstr>
select_group(const LoweredGroup &lg, SelectOptions &so,
             const std::function<HbmBinding(const std::string &)> &bind) {
    so.partition_dim = lg.partition_dim;
    so.partition_split = lg.partition_split;
    so.buffers = lg.buffers;
    so.resident = lg.resident;
    so.pe_critical_path = lg.pe_critical_path;
    so.engines = lg.engines;
    so.widened_reductions = lg.widened_reductions;
    for (const auto &[stage, t] : lg.stored_as)
        so.stored_as[stage] = isa_dtype_of(t, stage);
    // Bound (the program's variables made) in the order of the values' names, not of the
    // lowering's buffer names: a lowering reused for another group of its workload (rebound)
    // then makes that group's variables in the order its own lowering would, and a
    // --dump-schedules script given back (every group lowered afresh) writes the same NEFF.
    std::vector<std::pair<std::string, std::string>> by_value;
    for (const auto &[buf, value] : lg.hbm_buffers)
        if (lg.referenced.count(buf))
            by_value.emplace_back(value, buf);
    std::sort(by_value.begin(), by_value.end());
    for (const auto &[value, buf] : by_value)
        so.hbm[buf] = bind(value);
    return select_instructions(lg.body, so);
}

} // namespace nhc::codegen
