#ifndef NHC_NEFF_HUFFMANDEFLATE_H
#define NHC_NEFF_HUFFMANDEFLATE_H

/** \file
 * Raw deflate (RFC 1951) with Huffman codes alone: every byte a literal, no string matching, in
 * dynamic-Huffman blocks of kHuffmanBlockBytes of input, each with codes built from its own byte
 * counts. It is what zlib's Z_HUFFMAN_ONLY strategy writes (to within the blocks' headers), at
 * five to six times its speed: zlib codes one symbol at a time through its general block
 * machinery (60-75 MB/s a core on the 16-bit weights of a NEFF, against 330-500; bench/README.md,
 * "Compile time, 24 layers against 12"), where this counts the bytes once and writes each through
 * a table into a 64-bit bit buffer.
 *
 * Assumes nothing of the bytes. The output ends on a byte boundary: with the final-block bit
 * when `last`, else with an empty stored block (zlib's Z_SYNC_FLUSH), so that independently
 * coded pieces concatenate into one stream (ParallelGzip).
 */

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nhc::neff {

/** Input bytes per dynamic block: large enough that a block's header (some 80 bytes) costs
 *  nothing measurable, small enough that its codes follow a change of data within a piece. */
constexpr size_t kHuffmanBlockBytes = size_t(64) << 10;

/** Appends the raw deflate coding of `in` to `out`. */
void deflate_huffman_only(const uint8_t *in, size_t size, bool last, std::vector<uint8_t> &out);

} // namespace nhc::neff

#endif
