#ifndef NHC_FRONTEND_GUARDINFERENCE_H
#define NHC_FRONTEND_GUARDINFERENCE_H

/** \file
 * Some of ONNX 1.12's own shape inference functions index by an operand's rank or divide by an
 * attribute without checking it, and crash on a malformed node (found by the front-end fuzz
 * target; each input is in tests/fuzz/corpus/onnx_frontend). This pass puts those checks in front
 * of every version of the operators' inference functions, once per process, so that a node that
 * breaks one is an inference error of that node instead of a crash (its outputs stay unknown);
 * before the version converter and after inference, the first such node of the main graph is
 * refused by name (NHC_EONX010). A node
 * in a subgraph is left to the importer, which refuses control flow.
 */

#include <onnx/onnx_pb.h>

namespace nhc {

/** Wraps the guarded operators' inference functions; before any ONNX inference or conversion. */
void install_inference_guards();

/** NHC_EONX010 for the first node of `graph` that breaks a guard, with the ranks known so far:
 *  the declared ones before ONNX's version converter, those inference reached after it. */
void check_guarded_nodes(const onnx::GraphProto &graph);

} // namespace nhc

#endif
