#include "frontend/CheckModel.h"

#include "support/Error.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

namespace nhc {

int newest_known_opset() {
    auto range = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    return range.at(onnx::ONNX_DOMAIN).second;
}

static int declared_opset(const onnx::ModelProto &model) {
    for (const auto &imp : model.opset_import())
        if (imp.domain().empty() || imp.domain() == "ai.onnx")
            return static_cast<int>(imp.version());
    return 0;
}

int check_model(const onnx::ModelProto &model) {
    int opset = declared_opset(model);
    if (opset == 0)
        user_error("NHC_EONX002", "model '", model.graph().name(),
                   "' imports no version of the default ONNX domain; expected an opset_import "
                   "entry for domain \"\"");
    if (opset > newest_known_opset())
        user_error("NHC_EONX003", "model '", model.graph().name(), "' uses opset ", opset,
                   "; this compiler's ONNX library knows opsets up to ", newest_known_opset(),
                   ". Export the model with opset <= ", newest_known_opset());
    // Before opset conversion: ONNX's IR (which the converter goes through) holds only tensor
    // types and would silently turn a sequence or optional input into an untyped tensor.
    for (const auto *list : {&model.graph().input(), &model.graph().output()})
        for (const auto &vi : *list)
            if (vi.type().value_case() != onnx::TypeProto::kTensorType)
                user_error("NHC_EDTY001", "graph input or output '", vi.name(),
                           "' is not a tensor; sequence, map, optional and sparse types are not "
                           "supported");
    try {
        onnx::checker::check_model(model);
    } catch (const std::exception &e) {
        user_error("NHC_EONX002", "the ONNX checker rejected model '", model.graph().name(),
                   "': ", e.what());
    }
    return opset;
}

} // namespace nhc
