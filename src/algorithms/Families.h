#ifndef NHC_ALGORITHMS_FAMILIES_H
#define NHC_ALGORITHMS_FAMILIES_H

/** \file
 * The builders of each operator family, one .cpp per family. Algorithm.cpp maps op types to them.
 */

#include "algorithms/Algorithm.h"

namespace nhc::alg {

OpResult build_matmul(const OpContext &ctx);        // Matmul.cpp: MatMul
OpResult build_gemm(const OpContext &ctx);          // Matmul.cpp: Gemm
OpResult build_unary(const OpContext &ctx);         // Elementwise.cpp
OpResult build_binary(const OpContext &ctx);        // Elementwise.cpp
OpResult build_clip(const OpContext &ctx);          // Elementwise.cpp
OpResult build_compare(const OpContext &ctx);       // Elementwise.cpp
OpResult build_dropout(const OpContext &ctx);       // Elementwise.cpp
OpResult build_expand(const OpContext &ctx);        // Elementwise.cpp
OpResult build_slice(const OpContext &ctx);         // Layout.cpp
OpResult build_arg_reduce(const OpContext &ctx);    // Reduce.cpp
OpResult build_batch_norm(const OpContext &ctx);    // Normalization.cpp
OpResult build_instance_norm(const OpContext &ctx); // Normalization.cpp
OpResult build_conv(const OpContext &ctx);          // Conv.cpp
OpResult build_conv_taps(const OpContext &ctx);     // Conv.cpp: ConvTaps (domain nhc)
OpResult build_pool(const OpContext &ctx);          // Pool.cpp: MaxPool, AveragePool
OpResult build_pool_taps(const OpContext &ctx);     // Pool.cpp: PoolTaps (domain nhc)
OpResult build_resize(const OpContext &ctx);        // Resize.cpp
OpResult build_where(const OpContext &ctx);         // Elementwise.cpp
OpResult build_cast(const OpContext &ctx);          // Elementwise.cpp
OpResult build_softmax(const OpContext &ctx);       // Softmax.cpp
OpResult build_layer_norm(const OpContext &ctx);    // Normalization.cpp
OpResult build_reduce(const OpContext &ctx);        // Reduce.cpp
OpResult build_transpose(const OpContext &ctx);     // Layout.cpp
OpResult
build_reshape(const OpContext &ctx); // Layout.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Identity
OpResult build_split(const OpContext &ctx);       // Layout.cpp
OpResult build_concat(const OpContext &ctx);      // Layout.cpp
OpResult build_gather(const OpContext &ctx);      // Gather.cpp
OpResult build_gather_rows(const OpContext &ctx); // Matmul.cpp: Gather of table rows
/** Normalization.cpp: graph/GroupNorm's GroupNormRows (domain nhc). */
OpResult build_group_norm_rows(const OpContext &ctx);
/** Elementwise.cpp: graph/CausalMask's TriangularWhere (domain nhc). */
OpResult build_triangular_where(const OpContext &ctx);

/** NHC_EALG001: the node uses a form of its operator that the algorithm does not cover. */
[[noreturn]] void unsupported_form(const Node &node, const std::string &what);

/** Normalises an axis in [-rank, rank) (NHC_EALG001 otherwise). */
int normalize_axis(const Node &node, int64_t axis, int rank);

/** The input as a Tensor, or NHC_EALG001 if it is missing. */
const Tensor &input(const OpContext &ctx, size_t i);

/** Converts a stored value of dtype `t` to its compute type (fp32 for floating types). */
Halide::Expr to_compute(const Halide::Expr &e, DType t);

} // namespace nhc::alg

#endif
