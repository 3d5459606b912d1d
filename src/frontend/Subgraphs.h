#ifndef NHC_FRONTEND_SUBGRAPHS_H
#define NHC_FRONTEND_SUBGRAPHS_H

/** \file
 * The values a node's subgraphs (If's branches, Loop's body) read from the scopes around the
 * node: ONNX's outer-scope references, which are inputs of the node as much as its explicit ones
 * (for ordering, partitioning and which initializers stay). ONNX names are unique across a
 * model's scopes (IR.md, "Names Within a Graph"), so a name used in a subgraph and defined
 * nowhere inside it comes from outside.
 */

#include <onnx/onnx_pb.h>
#include <set>
#include <string>

namespace nhc {

/** The outer-scope names `node`'s subgraphs read, at any depth; empty for a node without one. */
std::set<std::string> captured_names(const onnx::NodeProto &node);

/** Whether `node` has a subgraph attribute (If, Loop, Scan). */
bool has_subgraph(const onnx::NodeProto &node);

} // namespace nhc

#endif
