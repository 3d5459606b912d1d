#ifndef NHC_DRIVER_HOSTPARTITION_H
#define NHC_DRIVER_HOSTPARTITION_H

/** \file
 * Host fallback (`--fallback host`, issue 18): splits a prepared ONNX model (frontend's
 * prepare_model: opset converted, shapes inferred, constants folded) into segments that run one
 * after the other, device segments (compiled to NEFFs) and host segments (run on the CPU by the
 * runtime's host evaluator, frontend/ConstantEvaluator.h).
 *
 * A node runs on the host when the device cannot run it: its operator has no device
 * implementation, or one of its values has a shape known only at run time (NonMaxSuppression's
 * output, and what is computed from it). Such a node needs a host evaluator; a node that has
 * neither is refused (NHC_EUOC002, as without fallback). If and Loop run on the host; the values
 * their subgraphs capture count among their inputs (frontend/Subgraphs.h). A model with inputs
 * of unknown size or values of types the compiler does not hold is left to the front end's own
 * errors. A node goes to the first segment of
 * its kind after the segments its inputs come from, so segments are few and each reads only values
 * of earlier ones; a segment's outputs are the values later segments or the graph read.
 *
 * Each segment is a model of its own: its nodes, the initializers they read (device segments'
 * large weights stay where the model file holds them: LoadedModel::in_place), and inputs and
 * outputs typed as inference typed them (a host segment's may have unknown dimensions).
 */

#include "frontend/LoadModel.h"

#include <string>
#include <vector>

namespace nhc {

struct ModelSegment {
    bool on_host = false;
    LoadedModel model; ///< the segment as a model; its graph is named `<graph>_sgNN`
    std::vector<std::string> inputs, outputs;
};

/** Requires the codegen operators to be registered (the device's operator set). Returns no
 *  segment when every node runs on the device: the model compiles as it would without fallback.
 *  NHC_EUOC002 when a node can run on neither. */
std::vector<ModelSegment> partition_for_host(const LoadedModel &model);

/** `--fallback none`: NHC_EUOC002 listing every node whose operator the device does not run,
 *  before the front end's import reports a shape it cannot hold (NonMaxSuppression's). */
void check_device_operators(const LoadedModel &model);

/** Where each operator runs in a partition, for the log: "TopK 'topk' on the host: ...". */
std::string describe_partition(const std::vector<ModelSegment> &segments);

} // namespace nhc

#endif
