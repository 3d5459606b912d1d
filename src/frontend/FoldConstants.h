#ifndef NHC_FRONTEND_FOLDCONSTANTS_H
#define NHC_FRONTEND_FOLDCONSTANTS_H

/** \file
 * Constant folding on the ONNX model, so that PyTorch exports become static: every node whose
 * inputs are all constant (initializers or already folded values), and every Shape/Size node whose
 * input has a fully inferred static shape, is evaluated on the host (ConstantEvaluator) and
 * replaced by an initializer. Alternates with shape inference until nothing more folds, because a
 * folded Reshape target or Expand shape lets inference resolve more shapes. Initializers that no
 * node reads any more are dropped.
 */

#include "frontend/LoadModel.h"

namespace nhc {

struct FoldStats {
    int folded_nodes = 0;
    int inference_rounds = 0;
};

/** Runs inference and folding to a fixed point. `opset` is the default-domain opset. */
FoldStats infer_and_fold(LoadedModel &model, int opset);

/** One folding sweep over the nodes in order (exposed for tests); returns nodes folded. */
int fold_constants_once(LoadedModel &model, int opset);

} // namespace nhc

#endif
