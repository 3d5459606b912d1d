#include "frontend/ConvertOpset.h"

#include "support/Error.h"
#include "support/Log.h"

#include <onnx/version_converter/convert.h>

namespace nhc {

namespace {

/** Scan-8 has a batch axis that Scan-9 dropped. ONNX's adapter (scan_8_9.h) removes the first
 *  dimension of the model's inputs and outputs that feed it, so the converted model would take
 *  other shapes than the user's; such a model is refused instead (NHC_EUOC002). */
void refuse_batched_scan(const onnx::GraphProto &g, int declared_opset) {
    if (declared_opset >= 9)
        return;
    for (int i = 0; i < g.node_size(); i++) {
        const onnx::NodeProto &n = g.node(i);
        if (n.op_type() == "Scan" && (n.domain().empty() || n.domain() == "ai.onnx"))
            user_error("NHC_EUOC002", "Scan ",
                       n.name().empty() ? "node " + std::to_string(i) : "'" + n.name() + "'",
                       " is of opset ", declared_opset,
                       ", whose batched form (a batch axis and sequence_lens) is not supported; ",
                       "export the model at opset 9 or later");
    }
}

} // namespace

int convert_to_canonical_opset(onnx::ModelProto &model, int declared_opset) {
    if (declared_opset >= kCanonicalOpset)
        return declared_opset;
    refuse_batched_scan(model.graph(), declared_opset);
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
