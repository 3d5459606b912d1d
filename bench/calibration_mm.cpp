#include "calibration_mm.h"

#include "calibration_builder.h"
#include "support/Error.h"

/* The loop nests follow calibration.md card MM line by line; each kernel's comment repeats the
 * card's pseudo-code. Tile constants: TILE_K = 128 (partitions), TILE_M = 128 (stationary free
 * size), TILE_N = 512 (moving free size, one PSUM bank of fp32). */

namespace nhc::bench {

using neff::AccessPattern;
using neff::AluOp;
using neff::DType;
using neff::Engine;
using neff::VarKind;

namespace {

constexpr int kTileK = 128, kTileM = 128, kTileN = 512;
constexpr int kPsumBanks = 8;
constexpr int kQueueLhsT = 0, kQueueRhs = 1, kQueueStore = 2;
constexpr int64_t kBf16 = 2;

struct Mm {
    KernelBuilder b;
    MmShape s;
    int lhsT, rhs, result;
    int group = 0; ///< PSUM accumulation groups so far (bank rotation)

    Mm(const std::string &target, const char *name, const MmShape &shape)
        : b(target, name), s(shape) {
        lhsT = b.var("lhsT", VarKind::Input, DType::BF16, {s.k, s.m});
        rhs = b.var("rhs", VarKind::Input, DType::BF16, {s.k, s.n});
        result = b.var("result", VarKind::Output, DType::BF16, {s.m, s.n});
    }
    AccessPattern bf16(int64_t offset, int64_t n) const {
        return KernelBuilder::sbuf(DType::BF16, 128, offset, n);
    }
    /** The next PSUM bank, [128 x 512] fp32. */
    AccessPattern next_psum() {
        return KernelBuilder::psum(128, (group++ % kPsumBanks) * 2048, 512);
    }
    /** One accumulation group over k tiles: matmul(stationary(kt), moving(kt)), the first one
     *  overwriting PSUM (the folded zero-init). */
    template <typename St, typename Mv>
    AccessPattern accumulate(int tiles, St stationary, Mv moving) {
        AccessPattern ps = next_psum();
        for (int kt = 0; kt < tiles; kt++) {
            b.matmul(ps, stationary(kt), moving(kt), kt > 0);
        }
        return ps;
    }
    /** MM0-MM2 epilogue: PSUM -> SBUF copy with the cast to bf16 on DVE, then the store. */
    void evacuate_and_store(const AccessPattern &ps, int64_t res_off, int64_t row0, int64_t col0) {
        AccessPattern res = bf16(res_off, kTileN);
        b.tensor_copy(Engine::DVE, res, ps);
        b.dma(Engine::ACT, kQueueStore, b.hbm_tile(result, row0, col0, kTileM, kTileN), res);
    }
    void load_lhsT(int64_t off, int64_t k0, int64_t m0, int64_t cols) {
        b.dma(Engine::SP, kQueueLhsT, bf16(off, cols), b.hbm_tile(lhsT, k0, m0, kTileK, cols));
    }
    void load_rhs(int64_t off, int64_t k0, int64_t n0, int64_t cols) {
        b.dma(Engine::SP, kQueueRhs, bf16(off, cols), b.hbm_tile(rhs, k0, n0, kTileK, cols));
    }
};

void require_multiple(const MmShape &s, int64_t bm, int64_t bk, int64_t bn) {
    nhc_assert(s.m % bm == 0 && s.k % bk == 0 && s.n % bn == 0,
               "matmul shape must be a multiple of the kernel's blocks");
}

/** MM0: for m, n: for k: load lhsT[k,m] [128x128]; load rhs[k,n] [128x512]; matmul;
 *  then copy psum -> sbuf and store [128x512]. */
neff::Program tiled(const std::string &target, const MmShape &s) {
    require_multiple(s, kTileM, kTileK, kTileN);
    Mm k(target, "mm0_tiled", s);
    constexpr int kRing = 4; // tiles allocated inside the k loop rotate over 4 buffers
    int64_t lhs = k.b.sbuf_alloc_tiles(kRing, kTileM * kBf16);
    int64_t rhs = k.b.sbuf_alloc_tiles(kRing, kTileN * kBf16);
    int64_t res[2] = {k.b.sbuf_alloc(kTileN * kBf16), k.b.sbuf_alloc(kTileN * kBf16)};
    int64_t kt_n = s.k / kTileK, iter = 0, load = 0;
    for (int64_t m = 0; m < s.m / kTileM; m++) {
        for (int64_t n = 0; n < s.n / kTileN; n++) {
            AccessPattern ps = k.next_psum();
            for (int64_t kt = 0; kt < kt_n; kt++, load++) {
                int64_t slot = load % kRing;
                k.load_lhsT(lhs + slot * kTileM * kBf16, kt * kTileK, m * kTileM, kTileM);
                k.load_rhs(rhs + slot * kTileN * kBf16, kt * kTileK, n * kTileN, kTileN);
                k.b.matmul(ps, k.bf16(lhs + slot * kTileM * kBf16, kTileM),
                           k.bf16(rhs + slot * kTileN * kBf16, kTileN), kt > 0);
            }
            k.evacuate_and_store(ps, res[iter++ % 2], m * kTileM, n * kTileN);
        }
    }
    return k.b.finish();
}

/** MM1: for m: load all lhsT[k,m]; for n: load all rhs[k,n]; accumulate over k; copy; store. */
neff::Program hoist_load(const std::string &target, const MmShape &s) {
    require_multiple(s, kTileM, kTileK, kTileN);
    Mm k(target, "mm1_hoist_load", s);
    int64_t kt_n = s.k / kTileK;
    int64_t lhs = k.b.sbuf_alloc_tiles(kt_n, kTileM * kBf16);
    int64_t rhs = k.b.sbuf_alloc_tiles(kt_n, kTileN * kBf16);
    int64_t res[2] = {k.b.sbuf_alloc(kTileN * kBf16), k.b.sbuf_alloc(kTileN * kBf16)};
    int64_t iter = 0;
    for (int64_t m = 0; m < s.m / kTileM; m++) {
        for (int64_t kt = 0; kt < kt_n; kt++) {
            k.load_lhsT(lhs + kt * kTileM * kBf16, kt * kTileK, m * kTileM, kTileM);
        }
        for (int64_t n = 0; n < s.n / kTileN; n++) {
            for (int64_t kt = 0; kt < kt_n; kt++) {
                k.load_rhs(rhs + kt * kTileN * kBf16, kt * kTileK, n * kTileN, kTileN);
            }
            AccessPattern ps = k.accumulate(
                int(kt_n), [&](int kt) { return k.bf16(lhs + kt * kTileM * kBf16, kTileM); },
                [&](int kt) { return k.bf16(rhs + kt * kTileN * kBf16, kTileN); });
            k.evacuate_and_store(ps, res[iter++ % 2], m * kTileM, n * kTileN);
        }
    }
    return k.b.finish();
}

/** MM2: blocks of 2 M tiles x 2 N tiles: for m block: load lhsT for both M tiles; for n block:
 *  load rhs for both N tiles; for bm, bn: accumulate over k; copy; store. */
neff::Program block_free(const std::string &target, const MmShape &s) {
    constexpr int kBm = 2, kBn = 2;
    require_multiple(s, kBm * kTileM, kTileK, kBn * kTileN);
    Mm k(target, "mm2_block_free", s);
    int64_t kt_n = s.k / kTileK;
    int64_t lhs = k.b.sbuf_alloc_tiles(kBm * kt_n, kTileM * kBf16);
    int64_t rhs = k.b.sbuf_alloc_tiles(kBn * kt_n, kTileN * kBf16);
    int64_t res[2] = {k.b.sbuf_alloc(kTileN * kBf16), k.b.sbuf_alloc(kTileN * kBf16)};
    auto lhs_at = [&](int64_t bm, int64_t kt) { return lhs + (bm * kt_n + kt) * kTileM * kBf16; };
    auto rhs_at = [&](int64_t bn, int64_t kt) { return rhs + (bn * kt_n + kt) * kTileN * kBf16; };
    int64_t iter = 0;
    for (int64_t m = 0; m < s.m / (kBm * kTileM); m++) {
        for (int64_t bm = 0; bm < kBm; bm++) {
            for (int64_t kt = 0; kt < kt_n; kt++) {
                k.load_lhsT(lhs_at(bm, kt), kt * kTileK, (m * kBm + bm) * kTileM, kTileM);
            }
        }
        for (int64_t n = 0; n < s.n / (kBn * kTileN); n++) {
            for (int64_t bn = 0; bn < kBn; bn++) {
                for (int64_t kt = 0; kt < kt_n; kt++) {
                    k.load_rhs(rhs_at(bn, kt), kt * kTileK, (n * kBn + bn) * kTileN, kTileN);
                }
            }
            for (int64_t bm = 0; bm < kBm; bm++) {
                for (int64_t bn = 0; bn < kBn; bn++) {
                    AccessPattern ps = k.accumulate(
                        int(kt_n), [&](int kt) { return k.bf16(lhs_at(bm, kt), kTileM); },
                        [&](int kt) { return k.bf16(rhs_at(bn, kt), kTileN); });
                    k.evacuate_and_store(ps, res[iter++ % 2], (m * kBm + bm) * kTileM,
                                         (n * kBn + bn) * kTileN);
                }
            }
        }
    }
    return k.b.finish();
}

/** MM3: TILES_IN_BLOCK M/N/K = 16/2/8 (blocks 2048 x 1024 x 1024).
 *  for n block: zero the result tiles [2][16][2] (SBUF bf16)
 *    for k block: load rhs [128 x 1024] x 8;
 *      for m block: load lhsT [128 x 2048] x 8;
 *        for bn, bm: psum = sum over bk of matmul(lhsT[bk][:, bm*128:+128], rhs[bk][:,
 * bn*512:+512]); result[m][bm][bn] += psum (tensor_tensor add, PSUM fp32 + SBUF bf16 -> bf16) for
 * m, bm: for bn: copy result[m][bm][bn] -> packed[:, bn*512:+512]; store packed [128 x 1024]. */
neff::Program fully_optimized(const std::string &target, const MmShape &s) {
    constexpr int kTm = 16, kTn = 2, kTk = 8;
    constexpr int64_t kBlockM = kTm * kTileM, kBlockN = kTn * kTileN, kBlockK = kTk * kTileK;
    require_multiple(s, kBlockM, kBlockK, kBlockN);
    Mm k(target, "mm3_fully_optimized", s);
    int64_t nbm = s.m / kBlockM;
    // Double-buffered lhsT and rhs blocks (set = iteration parity); see the header.
    int64_t lhs = k.b.sbuf_alloc_tiles(2 * kTk, kBlockM * kBf16);
    int64_t rhs = k.b.sbuf_alloc_tiles(2 * kTk, kBlockN * kBf16);
    int64_t res = k.b.sbuf_alloc_tiles(nbm * kTm * kTn, kTileN * kBf16);
    int64_t packed = k.b.sbuf_alloc_tiles(2, kBlockN * kBf16);
    auto res_at = [&](int64_t m, int64_t bm, int64_t bn) {
        return k.bf16(res + ((m * kTm + bm) * kTn + bn) * kTileN * kBf16, kTileN);
    };
    int64_t lhs_iter = 0, rhs_iter = 0, stores = 0;
    for (int64_t n = 0; n < s.n / kBlockN; n++) {
        for (int64_t t = 0; t < nbm * kTm * kTn; t++) {
            k.b.memset(Engine::DVE, k.bf16(res + t * kTileN * kBf16, kTileN), 0.0f);
        }
        for (int64_t kb = 0; kb < s.k / kBlockK; kb++) {
            int64_t rset = rhs + (rhs_iter++ % 2) * kTk * kBlockN * kBf16;
            for (int64_t bk = 0; bk < kTk; bk++) {
                k.load_rhs(rset + bk * kBlockN * kBf16, (kb * kTk + bk) * kTileK, n * kBlockN,
                           kBlockN);
            }
            for (int64_t m = 0; m < nbm; m++) {
                int64_t lset = lhs + (lhs_iter++ % 2) * kTk * kBlockM * kBf16;
                for (int64_t bk = 0; bk < kTk; bk++) {
                    k.load_lhsT(lset + bk * kBlockM * kBf16, (kb * kTk + bk) * kTileK, m * kBlockM,
                                kBlockM);
                }
                for (int64_t bn = 0; bn < kTn; bn++) {
                    for (int64_t bm = 0; bm < kTm; bm++) {
                        AccessPattern ps = k.accumulate(
                            kTk,
                            [&](int bk) {
                                return k.bf16(lset + bk * kBlockM * kBf16 + bm * kTileM * kBf16,
                                              kTileM);
                            },
                            [&](int bk) {
                                return k.bf16(rset + bk * kBlockN * kBf16 + bn * kTileN * kBf16,
                                              kTileN);
                            });
                        AccessPattern r = res_at(m, bm, bn);
                        k.b.tensor_tensor(Engine::DVE, AluOp::Add, r, ps, r);
                    }
                }
            }
        }
        for (int64_t m = 0; m < nbm; m++) {
            for (int64_t bm = 0; bm < kTm; bm++) {
                int64_t pk = packed + (stores++ % 2) * kBlockN * kBf16;
                for (int64_t bn = 0; bn < kTn; bn++) {
                    k.b.tensor_copy(Engine::DVE, k.bf16(pk + bn * kTileN * kBf16, kTileN),
                                    res_at(m, bm, bn));
                }
                k.b.dma(
                    Engine::ACT, kQueueStore,
                    k.b.hbm_tile(k.result, (m * kTm + bm) * kTileM, n * kBlockN, kTileM, kBlockN),
                    k.bf16(pk, kBlockN));
            }
        }
    }
    return k.b.finish();
}

} // namespace

const char *mm_name(MmVersion v) {
    static const char *names[] = {"MM0 tiled", "MM1 hoist load", "MM2 block free",
                                  "MM3 fully optimized"};
    return names[int(v)];
}

double mm_published_ms(MmVersion v) {
    static const double ms[] = {51.80, 42.96, 22.07, 6.97}; // calibration.md card MM
    return ms[int(v)];
}

neff::Program build_mm(MmVersion v, const MmShape &s, const std::string &target) {
    switch (v) {
    case MmVersion::Tiled:
        return tiled(target, s);
    case MmVersion::HoistLoad:
        return hoist_load(target, s);
    case MmVersion::BlockFree:
        return block_free(target, s);
    case MmVersion::FullyOptimized:
        return fully_optimized(target, s);
    }
    nhc_assert(false, "unknown matmul version");
    return {};
}

} // namespace nhc::bench
