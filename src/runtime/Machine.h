#ifndef NHC_RUNTIME_MACHINE_H
#define NHC_RUNTIME_MACHINE_H

/** \file
 * The state of one simulated NeuronCore: SBUF and PSUM (partition-major byte arrays of the
 * target's size) and the HBM of the loaded program, plus access-pattern gather/scatter.
 *
 * Every operand is checked before it is touched: partition range and start alignment
 * (NHC_ERT005), SBUF usable bytes (NHC_ERT004), PSUM capacity and bank crossing (NHC_ERT006),
 * and HBM bounds (already guaranteed at load by validate_hbm_bounds). Messages name the
 * instruction through the `Where` context.
 *
 * A timing-only Machine (functional = false) holds no memory at all: executors still check every
 * operand and describe the instruction for the timing model, but compute nothing (Runtime.h,
 * ExecOptions::timing_only). read/write/copy on it are internal errors.
 */

#include "neff/Isa.h"
#include "target/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nhc::rt {

/** Names an instruction in messages: "pe instruction 3 (matmul 'node')". */
struct Where {
    neff::Engine engine = neff::Engine::SP;
    size_t index = 0;
    const neff::Instr *instr = nullptr;
    std::string str() const;
};

/** A dense fp32 tile [partitions][free]. */
struct Tile {
    int partitions = 0;
    int64_t free = 0;
    std::vector<float> v;
    float *row(int p) { return v.data() + int64_t(p) * free; }
    const float *row(int p) const { return v.data() + int64_t(p) * free; }
};

class Machine {
public:
    Machine(const target::TargetInfo &t, const neff::Program &p, bool functional = true);

    /** False in timing-only mode: executors return after their checks, before any data moves. */
    bool functional() const { return functional_; }

    const target::TargetInfo &target() const { return t_; }
    const neff::Program &program() const { return p_; }

    /** Checks an operand (see file comment); `compute` adds the engine start-partition rule. */
    void check(const neff::AccessPattern &ap, const Where &w, const char *field,
               bool compute) const;
    Tile read(const neff::AccessPattern &ap) const;
    void write(const neff::AccessPattern &ap, const Tile &t);
    /** The raw bytes of every element, partition-major then free row-major. */
    std::vector<uint8_t> gather_bytes(const neff::AccessPattern &ap) const;
    void scatter_bytes(const neff::AccessPattern &ap, const std::vector<uint8_t> &bytes);
    /** Bitwise copy between operands of the same dtype and element count (the element streams
     *  are matched in order); a one-partition src is broadcast to every dst partition. */
    void copy_bits(const neff::AccessPattern &dst, const neff::AccessPattern &src);

    uint8_t *hbm_var(int var) { return hbm_.data() + p_.vars[var].hbm_offset; }
    const uint8_t *hbm_var(int var) const { return hbm_.data() + p_.vars[var].hbm_offset; }

private:
    /** Base byte address of partition p (SBUF/PSUM) or row p (HBM) of an operand. */
    uint8_t *row_base(const neff::AccessPattern &ap, int p);
    const uint8_t *row_base(const neff::AccessPattern &ap, int p) const;

    const target::TargetInfo &t_;
    const neff::Program &p_;
    bool functional_;
    std::vector<uint8_t> sbuf_, psum_, hbm_;
};

/** Calls f(free_index, byte_offset) for each element of one partition row, in row-major order
 *  of the free dims. Byte offsets are relative to the row base. */
template <typename F>
void for_each_offset(const neff::AccessPattern &ap, F &&f) {
    int64_t esize = ap.space == neff::MemSpace::HBM ? 1 : neff::dtype_size(ap.dtype);
    int64_t num[4] = {1, 1, 1, 1}, step[4] = {0, 0, 0, 0};
    size_t nd = ap.dims.size();
    for (size_t k = 0; k < nd; k++) {
        num[4 - nd + k] = ap.dims[k].num;
        step[4 - nd + k] = ap.dims[k].step * esize;
    }
    int64_t idx = 0;
    for (int64_t a = 0; a < num[0]; a++) {
        for (int64_t b = 0; b < num[1]; b++) {
            for (int64_t c = 0; c < num[2]; c++) {
                int64_t off = ap.offset + a * step[0] + b * step[1] + c * step[2];
                for (int64_t d = 0; d < num[3]; d++) {
                    f(idx++, off + d * step[3]);
                }
            }
        }
    }
}

} // namespace nhc::rt

#endif
