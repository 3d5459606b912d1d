#ifndef NHC_NEFF_SELECTORSTATE_H
#define NHC_NEFF_SELECTORSTATE_H

/** \file
 * Internal state shared by the parts of instruction selection (SelectInstructions.cpp: the walk,
 * copies, matmuls; SelectCompute.cpp: elementwise and reductions). Not a public interface.
 */

#include "neff/AffineAccess.h"
#include "neff/Footprint.h"
#include "neff/OnChipAllocator.h"
#include "neff/SelectInstructions.h"

#include <array>
#include <optional>

namespace nhc::codegen {

/** Where an element of an on-chip buffer lives. */
struct Placement {
    int64_t partition = 0;
    int64_t elem = 0; ///< element offset inside the partition
};

/** A buffer named in the Stmt: an HBM variable or an on-chip allocation.
 *  On chip, Halide's dims (extents, dim 0 innermost) are laid out as the schedule declares:
 *  dim `pd` is on partitions (split as index % psplit on partitions and index / psplit as a chunk
 *  when psplit > 0); in each partition the dims inside pd are contiguous, then the chunks, then
 *  the dims outside pd. */
struct Buffer {
    std::string name;
    neff::MemSpace space = neff::MemSpace::None;
    neff::DType dtype = neff::DType::F32;
    int var = -1;           ///< HBM
    int64_t hbm_bytes = -1; ///< HBM: the tensor's size (-1: unknown)
    int64_t hbm_offset = 0; ///< HBM: where the tensor starts in its variable, in bytes
    int64_t offset = 0;     ///< on chip: byte offset in each partition
    int64_t row_elems = 1;  ///< on chip: elements per partition
    int64_t partitions = 1; ///< on chip
    std::vector<int64_t> extents;
    int pd = -1;
    int64_t psplit = 0;

    Placement place(int64_t flat) const;
    /** The chunks of the partition dim: a split that does not divide it pads its last chunk
     *  (rows past the extent are never addressed: every access is checked linear per loop). */
    int64_t chunks() const { return psplit > 0 ? (extents[pd] + psplit - 1) / psplit : 1; }
};

/** One perfect nest: loops outermost first and the Store, with every let substituted. */
struct Nest {
    std::vector<Loop> loops;
    std::string dst;
    Halide::Expr index, value;
};

/** The loops of one instruction: loops[p] walks partitions (p = -1: one partition). */
struct IterSpace {
    std::vector<Loop> loops;
    int p = -1;
    std::vector<int> free() const;
};

class Selector {
public:
    explicit Selector(const SelectOptions &o);
    void walk(const Halide::Internal::Stmt &s);
    std::vector<SelectedInstr> take() { return std::move(out_); }
    /** Frees the stages' fixed buffers at the end of the group. */
    void release_fixed_buffers();

    // Used by SelectCompute.cpp.
    const Buffer &buffer(const std::string &name) const;
    Affine affine(const std::string &buf, const Halide::Expr &index, const Nest &n) const;
    neff::AccessPattern onchip_ap(const Buffer &b, const Affine &a, const IterSpace &it,
                                  const Nest &n, const char *role) const;
    void emit(neff::Engine e, neff::Instr i);
    /** ACT or DVE: the one that would finish `n` more elements of single-input work first, given
     *  the work this group has queued on each so far (estimated by the target's cost model). */
    neff::Engine lighter_engine(int64_t n) const;
    /** The engine the schedule names for `stage` (SelectOptions::engines), if any. */
    std::optional<neff::Engine> named_engine(const std::string &stage) const;
    /** The engine for `i`, an instruction DVE can run, of `stage`: GpSimd when the schedule names
     *  it for the stage and it can run `i` (tensor_scalar, tensor_copy or memset with every
     *  operand in SBUF: neuroncore.md L184, L301-L311), else DVE. */
    neff::Engine vector_engine(const std::string &stage, const neff::Instr &i) const;
    /** Removes the last selected instruction if it is a memset of exactly `dst` to `value` (an
     *  initialisation that the next instruction overwrites); returns whether it did. */
    bool drop_memset(const neff::AccessPattern &dst, float value);
    /** If the last selected instruction is an ACT activation that wrote exactly `src`, makes it
     *  also sum each partition's row into `dst` ([P, 1]) and returns true. */
    bool accumulate_into_last_activation(const neff::AccessPattern &src,
                                         const neff::AccessPattern &dst);
    /** Whether loop j moves the access across the buffer's partitions. */
    bool walks_partitions(const Buffer &b, const Affine &a, int j, const Loop &l) const;
    [[noreturn]] void fail(const std::string &code, const Nest &n, const std::string &what) const;
    /** A dense SBUF temporary shaped like the iteration space; released by release_temps(). */
    neff::AccessPattern temp_tile(const IterSpace &it, const Nest &n);
    void release_temps();
    const SelectOptions &options() const { return opt_; }
    AllocationHistory sbuf_history() const { return sbuf_.history(); }
    AllocationHistory psum_history() const { return psum_.history(); }
    int64_t group_lifetime_bytes() const { return group_lifetime_bytes_; }
    /** The SBUF regions of resident stages' tiles (SelectOptions::kept_sbuf). */
    const std::vector<std::pair<int64_t, int64_t>> &kept_sbuf() const { return kept_sbuf_; }

private:
    void select_nest_instructions(const Nest &n);
    /** NHC_EGEN018 when an engine instruction selected since `first` addresses a tile from a
     *  partition the engines cannot start it at. */
    void check_partition_starts(const Nest &n, size_t first) const;
    void visit_allocate(const Halide::Internal::Allocate *op);
    /** The offset of the next of a stage's fixed buffers (SelectOptions::buffers), allocated at
     *  its first tile of that size; -1 if the stage has none or the tile is larger. */
    int64_t next_fixed_buffer(const std::string &stage, OnChipAllocator &alloc, int64_t bytes);
    void visit_for(const Halide::Internal::For *op);
    /** A loop of a nest whose bounds vary along the nest's enclosing loops, over their whole
     *  ranges (a reduction bounded per row, SelectOptions::widened_reductions). */
    std::optional<Loop> widened_loop(const std::string &name, const Halide::Expr &min,
                                     const Halide::Expr &extent,
                                     const std::vector<Loop> &enclosing) const;
    bool collect_nest(const Halide::Internal::Stmt &s, Nest &n) const;
    void select_nest(const Nest &n);
    void select_dma(const Nest &n, const std::string &src, const Halide::Expr &src_index);
    /** HBM -> HBM with no loop within the partition count: the outermost loop as rows in chunks
     *  within it (one long loop as rows x columns); false, having emitted nothing, otherwise. */
    bool split_hbm_copy(const Nest &n, const std::string &src, const Halide::Expr &src_index);
    /** A copy from HBM whose row is read from an on-chip buffer: one gathering DMA (Pool) per
     *  partition tile of rows. */
    void select_indirect_dma(const Nest &n, const std::string &table,
                             const Halide::Expr &src_index);
    /** A copy with a constant border (SelectBoundedCopy.cpp): a memset and a copy of the box
     *  inside the border; false, having selected nothing, if `n` is not of that form. */
    bool select_bounded_copy(const Nest &n);
    /** A load broadcast over the partitions built on the PE when SelectOptions::broadcast_on_pe
     *  says so (SelectBroadcast.cpp); false, having selected nothing, when `dma` is not such a
     *  load or the form is not handled. */
    bool select_pe_broadcast(const neff::Instr &dma);
    void select_matmul(const Nest &n);
    void select_transpose(const Nest &n, const std::string &src, const Halide::Expr &src_index);
    Halide::Expr subst(const Halide::Expr &e) const;
    int64_t constant(const Halide::Expr &e, const std::string &what) const;
    /** NHC_EGEN019 when a DMA's HBM side leaves its tensor (a schedule that computes a stage
     *  beyond the tensor's bounds: a split's tail). */
    void check_hbm_bounds(const Nest &n, const neff::AccessPattern &ap, const Buffer &b) const;

    const SelectOptions &opt_;
    std::map<std::string, Halide::Expr> env_;
    std::map<std::string, Buffer> buffers_;
    /** A PSUM accumulator set to zero: the matmul that first writes a region of it overwrites
     *  (folding the zeroing in), later ones into that region accumulate. The regions written
     *  since the zeroing, per partition range (exact bytes): a schedule may split one tile's
     *  matmuls by columns, each then the first into its own region. */
    struct PsumZeroed {
        bool pending = false;
        struct Region {
            int64_t first_row, end_row;
            neff::ByteIntervals bytes;
        };
        std::vector<Region> written;
    };
    std::map<std::string, PsumZeroed> psum_zeroed_;
    /** Whether a matmul into `dst` overwrites (see PsumZeroed); NHC_EGEN012 when it covers part
     *  of a region written before and part of one not yet written. */
    bool matmul_overwrites(const Nest &n, const neff::AccessPattern &dst);
    OnChipAllocator sbuf_, psum_;
    int repeat_depth_ = 0;             ///< repeat loops around the statement being walked
    int64_t group_lifetime_bytes_ = 0; ///< SelectOptions::group_lifetime_bytes
    std::vector<int64_t> temps_;
    std::vector<std::pair<int64_t, int64_t>> kept_sbuf_;
    std::vector<SelectedInstr> out_;
    size_t nest_first_ = 0; ///< the first instruction of the nest being selected
    std::array<double, neff::kNumEngines> queued_ns_{}; ///< estimated work per engine
    int next_queue_ = 0, next_store_queue_ = 0;
    struct FixedBuffers {
        std::vector<int64_t> offsets;
        int64_t bytes = 0;
        OnChipAllocator *alloc = nullptr;
        size_t next = 0;
    };
    std::map<std::string, FixedBuffers> fixed_; ///< per stage with a buffer count
};

/** The load under any number of casts (a copy with a dtype conversion), or nullptr. */
const Halide::Internal::Load *as_load(const Halide::Expr &e);

/** Elementwise, reduction and memset nests (SelectCompute.cpp). */
void select_compute(Selector &s, const Nest &n);

} // namespace nhc::codegen

#endif
