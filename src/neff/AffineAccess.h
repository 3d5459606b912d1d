#ifndef NHC_NEFF_AFFINEACCESS_H
#define NHC_NEFF_AFFINEACCESS_H

/** \file
 * Affine access recovery (DESIGN.md §6): an index of a flattened Store or Load inside a nest of
 * constant-extent loops, written as base + sum_j stride_j * loop_j with constant base and strides.
 * Strides are found as simplify(substitute(v, v + 1, e) - e), the base with every loop at its
 * minimum (../shared/reference/isel-prototype.md §2b).
 */

#include <Halide.h>
#include <optional>
#include <string>
#include <vector>

namespace nhc::codegen {

struct Loop {
    std::string name;
    int64_t min = 0;
    int64_t extent = 1;
};

struct Affine {
    int64_t base = 0;
    std::vector<int64_t> strides; ///< one per loop of the nest, outermost first
};

/** Each loop's range [min, min + extent - 1], for Halide's simplifier and bounds queries. */
Halide::Internal::Scope<Halide::Internal::Interval> loop_ranges(const std::vector<Loop> &loops);

/** nullopt when the index is not affine in the loops (or not constant once they are fixed). */
std::optional<Affine> affine_index(const Halide::Expr &index, const std::vector<Loop> &loops);

} // namespace nhc::codegen

#endif
