#ifndef NHC_FRONTEND_ONNXOPERATORS_H
#define NHC_FRONTEND_ONNXOPERATORS_H

/** \file
 * The ONNX operators a model may hold: the default domain's operators defined at or below an
 * opset, from ONNX's own schema registry (libonnx 1.12), those whose latest definition there is
 * deprecated left out. `list-operators` says for each where it runs.
 */

#include <string>
#include <vector>

namespace nhc {

/** Sorted names of the default domain's operators defined at or below `opset`. */
std::vector<std::string> onnx_operators(int opset);

} // namespace nhc

#endif
