#ifndef NHC_BENCH_CALIBRATION_MM_H
#define NHC_BENCH_CALIBRATION_MM_H

/** \file
 * The calibration suite (issue 4): the four versions of the NKI matmul tutorial, card MM of
 * ../shared/reference/calibration.md, re-expressed in our ISA with the same tiles, loads, matmuls,
 * PSUM evacuations / accumulations and stores, built with KernelBuilder.
 *
 * result[M, N] (bf16) = lhsT[K, M].T @ rhs[K, N], bf16 inputs, fp32 PSUM. Published Trn1 times
 * are for M = 4096, K = 8192, N = 8192; smaller shapes (multiples of the block sizes) exist so that
 * tests can check the kernels' values functionally.
 *
 * Choices the card leaves open, made once for all four versions (docs/timing.md):
 *  - loads are issued by SP, lhsT on DMA queue 0 and rhs on queue 1; stores are issued by ACT on
 *    queue 2 (so a store waiting for its data never blocks the next loads in SP's stream);
 *  - PSUM is evacuated (MM0-MM2) and accumulated / packed / zeroed (MM3) on VectorE, as the KO
 *    card's VectorE instruction count for the blocked version shows (calibration.md, card KO);
 *  - the PSUM zero-init is folded into the first matmul of each accumulation group (the card allows
 *    it); the PSUM tile of each group rotates over the 8 banks;
 *  - streamed tiles that the NKI code allocates inside the k loop (MM0) rotate over 4 buffers;
 *    arrays the NKI code declares (MM1, MM2: 64 k-tiles) are single sets, as declared; MM3
 *    double-buffers its lhsT and rhs blocks, which is what brings its SBUF use to the ~22 MB the
 *    tutorial reports (calibration.md, MM3 "SBUF use").
 */

#include "neff/Isa.h"

#include <string>

namespace nhc::bench {

enum class MmVersion { Tiled = 0, HoistLoad = 1, BlockFree = 2, FullyOptimized = 3 };
constexpr int kNumMmVersions = 4;

struct MmShape {
    int64_t m = 4096, k = 8192, n = 8192;
};

/** "MM0 tiled", ... */
const char *mm_name(MmVersion v);
/** Published Trn1 time in ms (calibration.md card MM). */
double mm_published_ms(MmVersion v);
/** Builds one version. Shapes must be multiples of the version's block sizes. */
neff::Program build_mm(MmVersion v, const MmShape &s = {}, const std::string &target = "trn1");

} // namespace nhc::bench

#endif
