#include "frontend/ConvertOpset.h"

#include "support/Log.h"

#include <onnx/version_converter/convert.h>

namespace nhc {

int convert_to_canonical_opset(onnx::ModelProto &model, int declared_opset) {
    if (declared_opset >= kCanonicalOpset)
        return declared_opset;
    try {
        onnx::ModelProto converted =
            onnx::version_conversion::ConvertVersion(model, kCanonicalOpset);
        // The converter rebuilds the graph through ONNX's IR and drops initializer-only
        // bookkeeping for old IR versions; keep the original if it lost the graph outputs.
        if (converted.graph().output_size() != model.graph().output_size()) {
            log_warning("opset conversion from ", declared_opset, " to ", kCanonicalOpset,
                        " changed the graph outputs; keeping opset ", declared_opset);
            return declared_opset;
        }
        model = std::move(converted);
        log_info("converted opset ", declared_opset, " to ", kCanonicalOpset);
        return kCanonicalOpset;
    } catch (const std::exception &e) {
        log_warning("ONNX version converter cannot take model '", model.graph().name(),
                    "' from opset ", declared_opset, " to ", kCanonicalOpset, " (", e.what(),
                    "); keeping opset ", declared_opset);
        return declared_opset;
    }
}

} // namespace nhc
