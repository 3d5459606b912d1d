#ifndef NHC_ALGORITHMS_BROADCAST_H
#define NHC_ALGORITHMS_BROADCAST_H

/** \file
 * ONNX multidirectional (numpy) broadcasting for the algorithms. A broadcast operand becomes an
 * explicit Func over the output's axes (DESIGN.md §3: a schedule cannot add a partition dim, so
 * the algorithm materialises the broadcast as a stage of its own).
 */

#include "algorithms/Algorithm.h"

namespace nhc::alg {

/** The broadcast shape of several ONNX shapes; NHC_EALG001 naming the node if they don't. */
Shape broadcast_shape(const Node &node, const std::vector<Shape> &shapes);

/** `t` if it already has shape `out`, else a new stage `role` reading t with size-1 axes pinned. */
Tensor broadcast_to(Builder &b, const Tensor &t, const Shape &out, const std::string &role);

/** Index expressions (ONNX order) into a tensor of shape `in` for an output index of shape `out`
 *  under broadcasting. */
std::vector<Halide::Expr> broadcast_index(const Shape &in, const Shape &out,
                                          const std::vector<Halide::Expr> &out_index);

/** Vars as Exprs in ONNX order: onnx_index(vars)[i] is the var of ONNX axis i. */
std::vector<Halide::Expr> onnx_index(const std::vector<Halide::Var> &halide_vars);

} // namespace nhc::alg

#endif
