/** \file
 * Load-time checks of a program. Most important: every HBM operand stays inside its variable, so
 * the runtime never reads or writes outside the HBM it allocated for the NEFF
 * (neuron-compiler.md §3.3, NRT_INVALID "bad DMA descriptor"). SBUF/PSUM rules are checked when
 * an instruction executes (src/runtime/Machine.h).
 */
#include "neff/NeffFile.h"

#include "support/Error.h"

namespace nhc::neff {

namespace {

void check_ap(const Program &p, const AccessPattern &ap, Engine e, size_t index, const Instr &i,
              const char *field) {
    if (ap.space != MemSpace::HBM) {
        return;
    }
    auto where = [&]() {
        return std::string(target::engine_name(e)) + " instruction " + std::to_string(index) +
               " (" + opcode_name(i.op) + ") operand " + field;
    };
    if (ap.var < 0 || ap.var >= int(p.vars.size())) {
        user_error("NHC_ENEFF008", where(), " names HBM variable ", ap.var, ", the NEFF has ",
                   p.vars.size());
    }
    const Variable &v = p.vars[ap.var];
    // Extremes of the addressed bytes; __int128 so that hostile counts cannot overflow.
    __int128 lo = ap.offset, hi = ap.offset;
    auto extend = [&](int64_t step, int64_t num) {
        if (num < 1) {
            user_error("NHC_ENEFF008", where(), " has a dimension of ", num, " elements");
        }
        __int128 span = __int128(step) * (num - 1);
        (span < 0 ? lo : hi) += span;
    };
    extend(ap.partition_step, ap.num_partitions);
    for (const auto &d : ap.dims) {
        extend(d.step, d.num);
    }
    hi += dtype_size(ap.dtype);
    if (lo < 0 || hi > v.size_bytes()) {
        user_error("NHC_ENEFF008", where(), " reads out of bounds: bytes [", int64_t(lo), ", ",
                   int64_t(hi), ") of variable '", v.name, "' which has ", v.size_bytes(),
                   " bytes");
    }
}

} // namespace

void validate_program(const Program &p) {
    for (const auto &v : p.vars) {
        if (v.kind == VarKind::Weight && p.weights_loaded &&
            int64_t(v.has_bytes() ? v.data_size : 0) != v.size_bytes()) {
            user_error("NHC_ENEFF011", "weight '", v.name, "' has ",
                       v.has_bytes() ? v.data_size : 0, " bytes of data, expected ",
                       v.size_bytes());
        }
    }
    for (int e = 0; e < kNumEngines; e++) {
        const auto &s = p.streams[e];
        for (size_t k = 0; k < s.size(); k++) {
            const Instr &i = s[k];
            if (!engine_can_run(i.op, Engine(e))) {
                user_error("NHC_ENEFF012", target::engine_name(Engine(e)), " instruction ", k,
                           " is ", opcode_name(i.op), ", which that engine cannot run");
            }
            if (i.op == Opcode::Dma && i.src1.present() && Engine(e) != Engine::POOL) {
                // nc.md:L270: only software DGE (GpSimd-generated descriptors) gathers.
                user_error("NHC_ENEFF013", target::engine_name(Engine(e)), " instruction ", k,
                           " is an indirect dma (it has an index): only pool issues those");
            }
            for (const auto &f : opcode_schema(i.op).fields) {
                if (f.kind == FieldKind::Ap) {
                    check_ap(p, slot_ap(i, f.slot), Engine(e), k, i, f.key);
                } else if (f.kind == FieldKind::Scalar && slot_scalar(i, f.slot).is_ap) {
                    check_ap(p, slot_scalar(i, f.slot).ap, Engine(e), k, i, f.key);
                }
            }
        }
    }
}

} // namespace nhc::neff
