#ifndef NHC_ALGORITHMS_REDUCTION_H
#define NHC_ALGORITHMS_REDUCTION_H

/** \file
 * Helpers for operators that reduce over a set of axes (Softmax, LayerNormalization, Reduce*):
 * the kept axes index a stage of lower rank, the reduced axes are walked by an RDom.
 */

#include "algorithms/Algorithm.h"

#include <set>

namespace nhc::alg {

struct ReductionAxes {
    std::vector<int> reduced; ///< ONNX axes, ascending
    std::vector<int> kept;    ///< ONNX axes, ascending
    Halide::RDom rdom;        ///< one dimension per reduced axis, innermost = last reduced axis
    int64_t count = 1;        ///< elements reduced per output
};

ReductionAxes make_reduction(const Shape &shape, const std::set<int> &axes,
                             const std::string &name);

/** A full ONNX index: kept axes from `kept_index` (ONNX order of the kept axes), reduced axes from
 *  the RDom. */
std::vector<Halide::Expr> full_index(const ReductionAxes &r, int rank,
                                     const std::vector<Halide::Expr> &kept_index);

/** The kept part (ONNX order) of a full ONNX index. */
std::vector<Halide::Expr> kept_part(const ReductionAxes &r, const std::vector<Halide::Expr> &full);

} // namespace nhc::alg

#endif
