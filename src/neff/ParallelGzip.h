#ifndef NHC_NEFF_PARALLELGZIP_H
#define NHC_NEFF_PARALLELGZIP_H

/** \file
 * A gzip stream written by several threads (--num-parallel-jobs), the way pigz does it: the input
 * is cut into blocks of a fixed size, each compressed on its own (raw deflate, no dictionary,
 * ended by a sync flush so that the next block starts on a byte), and the blocks are written in
 * order behind one gzip header and before one trailer (CRC-32 of all the input, combined per
 * block). The cut does not depend on the number of threads, so the bytes are the same for any
 * job count. The header has no timestamp and no name, so identical input gives identical bytes.
 * A NEFF is mostly weights: each block is coded as a sample of it says (block_coding), with
 * deflate's Huffman codes alone (16-bit weights: as small as with string matching; written by
 * neff/HuffmanDeflate, several times as fast as zlib), with matching too (instruction streams,
 * zlib at level 1), or stored (fp32 weights, which neither coding shrinks by a tenth).
 */

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <vector>

namespace llvm {
class ThreadPool;
}

namespace nhc::neff {

/** How a block is written: deflate's string matching and Huffman codes, its Huffman codes alone,
 *  or stored as it is. */
enum class BlockCoding { Matches, HuffmanOnly, Stored };

/** The coding of a block, from its first 64 KiB coded both ways: matching where it shrinks the
 *  sample by 5% of its size more than Huffman codes alone, else Huffman codes alone where they
 *  shrink it by a tenth, else stored. Depends only on the block's bytes. */
BlockCoding block_coding(const std::vector<uint8_t> &block);

class ParallelGzip {
public:
    using Sink = std::function<void(const uint8_t *data, size_t size)>;
    /** Input bytes per block: large enough that the sync flush (5 bytes) and the lost
     *  back-references across blocks cost nothing measurable, small enough to spread a weight. */
    static constexpr size_t kBlockBytes = size_t(4) << 20;

    /** Compressed bytes go to `sink`, in order; `jobs` threads compress (1: this thread). */
    ParallelGzip(Sink sink, int jobs);
    ~ParallelGzip();
    void write(const uint8_t *data, size_t size);
    /** Compresses what is left as the final block and writes the trailer. */
    void finish();

private:
    struct Block {
        std::vector<uint8_t> deflated;
        uint32_t crc = 0;
        size_t size = 0;
    };
    void submit(bool last);
    void emit_oldest();

    Sink sink_;
    int jobs_;
    std::unique_ptr<llvm::ThreadPool> pool_;
    std::vector<uint8_t> pending_;
    std::deque<std::shared_future<Block>> in_flight_;
    uint32_t crc_ = 0;
    uint64_t total_ = 0;
    bool finished_ = false;
};

} // namespace nhc::neff

#endif
