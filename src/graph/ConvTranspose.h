#ifndef NHC_GRAPH_CONVTRANSPOSE_H
#define NHC_GRAPH_CONVTRANSPOSE_H

/** \file
 * ConvTranspose (1-D and 2-D, group 1) as graph/ConvIm2Col's ConvTaps: the transposed
 * convolution is a convolution, with stride 1 and the same dilation, of the input spread by the
 * stride (stride - 1 zeros between elements: ConvTaps' `input_strides`, written into the zeroed
 * staging tile) and padded by dilation * (kernel - 1) - pad_begin, with the kernel flipped and its
 * channel axes swapped (w [Ci, Co, K...] -> [Ci, KH, KW, Co] read at K - 1 - k; at compile time
 * for constant weights, by a Transpose and a reversing Slice otherwise). The output shape is the
 * one shape inference gave (output_shape, output_padding, auto_pad); pads follow the ONNX
 * specification's total_padding split. The spread image is staged whole or per band of output
 * rows, as any ConvTaps' (schedules/ConvSchedule). NHC_EALG001 for forms not covered: groups,
 * 3-D, a pad_begin over dilation * (kernel - 1) (a crop), spread rows that one output row reads
 * over the on-chip budget.
 */

#include "graph/ConvIm2Col.h"

namespace nhc {

/** Rewrites every ConvTranspose; returns how many. */
int lower_conv_transposes(Graph &g, const ConvLimits &limits);

} // namespace nhc

#endif
