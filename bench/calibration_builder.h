#ifndef NHC_BENCH_CALIBRATION_BUILDER_H
#define NHC_BENCH_CALIBRATION_BUILDER_H

/** \file
 * A small kernel builder for hand-structured NeuronCore programs (the calibration suite, issue 4).
 * It emits Program structs directly (no assembly text) and inserts the semaphores itself:
 *
 *  - On-chip memory is declared as named buffers (SBUF byte ranges per partition, PSUM banks).
 *    An operand belongs to the buffer that contains its first byte; hazards are tracked per
 *    buffer (conservative for sub-views: a read of part of a buffer waits for its last writer).
 *  - Every instruction signals the semaphore of its stream: a compute engine's instructions signal
 *    that engine's semaphore (in-order engines: count = instructions so far), a DMA signals the
 *    semaphore of its DMA queue when the transfer completes. The kernels here only issue full
 *    128-partition transfers, which use all DMA engines and so complete in queue order.
 *  - Before an instruction, the builder adds waits for the producers of what it reads (RAW) and
 *    for the last writer and the readers of what it writes (WAW, WAR), dropping waits its stream
 *    already performed and waits on its own stream (in order).
 *  - HBM hazards are not tracked: the kernels read their inputs and write each output region once.
 */

#include "neff/Isa.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nhc::bench {

class KernelBuilder {
public:
    KernelBuilder(const std::string &target, const std::string &name);

    /** Declares an HBM variable; returns its index. */
    int var(const std::string &name, neff::VarKind kind, neff::DType dtype,
            std::vector<int64_t> shape);
    /** Reserves `bytes` per partition of SBUF (bump allocation, checked against the target). */
    int64_t sbuf_alloc(int64_t bytes);
    /** `count` consecutive buffers of `bytes` each (tracked separately); returns the first. */
    int64_t sbuf_alloc_tiles(int64_t count, int64_t bytes);
    /** [rows x cols] tile at (row0, col0) of a row-major 2-D HBM variable. */
    neff::AccessPattern hbm_tile(int var, int64_t row0, int64_t col0, int rows, int64_t cols) const;
    /** [partitions x n] contiguous elements at byte `offset` of every partition. */
    static neff::AccessPattern sbuf(neff::DType dt, int partitions, int64_t offset, int64_t n);
    static neff::AccessPattern psum(int partitions, int64_t offset, int64_t n);

    void dma(neff::Engine issuer, int queue, const neff::AccessPattern &dst,
             const neff::AccessPattern &src);
    void matmul(const neff::AccessPattern &dst, const neff::AccessPattern &stationary,
                const neff::AccessPattern &moving, bool accumulate);
    void tensor_copy(neff::Engine e, const neff::AccessPattern &dst,
                     const neff::AccessPattern &src);
    void tensor_tensor(neff::Engine e, neff::AluOp op, const neff::AccessPattern &dst,
                       const neff::AccessPattern &a, const neff::AccessPattern &b);
    void memset(neff::Engine e, const neff::AccessPattern &dst, float value);

    neff::Program finish();

private:
    /** A producer/consumer stream: engines 0..4, DMA queue q at kQueueBase + q. */
    static constexpr int kQueueBase = 8;
    struct Buffer {
        int writer_stream = -1;
        uint32_t writer_count = 0;
        std::map<int, uint32_t> readers; ///< stream -> highest count that read since the write
    };

    Buffer *buffer_of(const neff::AccessPattern &ap);
    /** Adds the waits, records the accesses and appends `i` to `engine`'s stream. */
    void emit(neff::Engine engine, int stream, neff::Instr i,
              const std::vector<const neff::AccessPattern *> &reads,
              const neff::AccessPattern *write);
    void need(std::map<int, uint32_t> &waits, int stream, int producer, uint32_t count) const;

    neff::Program p_;
    int64_t sbuf_next_ = 0;
    std::map<std::pair<int, int64_t>, Buffer> buffers_; ///< (space, first byte) -> state
    std::map<int, uint32_t> count_;                     ///< stream -> instructions signalled
    std::map<int, std::map<int, uint32_t>> waited_;     ///< engine -> producer -> value waited
};

} // namespace nhc::bench

#endif
