#include "frontend/CheckModel.h"

#include "frontend/ModelSize.h"
#include "support/Error.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <set>

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

/** Every output of `g` is an input, an initializer or a node's output (of `g`, or of a scope
 *  around it: `outer`). ONNX 1.12's checker lets an output nobody computes through, and its
 *  version converter then dereferences nothing (found by tests/fuzz's front-end target). */
static void check_outputs_defined(const onnx::GraphProto &g, std::set<std::string> outer) {
    for (const auto &vi : g.input())
        outer.insert(vi.name());
    for (const auto &t : g.initializer())
        outer.insert(t.name());
    for (const auto &n : g.node())
        outer.insert(n.output().begin(), n.output().end());
    for (const auto &vi : g.output())
        if (!outer.count(vi.name()))
            user_error("NHC_EONX002", "graph '", g.name(), "' has output '", vi.name(),
                       "', which no node computes and which is no input or initializer");
    for (const auto &n : g.node())
        for (const auto &a : n.attribute()) {
            if (a.has_g())
                check_outputs_defined(a.g(), outer);
            for (const auto &sub : a.graphs())
                check_outputs_defined(sub, outer);
        }
}

int check_model(const onnx::ModelProto &model) {
    check_model_size(model);
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
    check_outputs_defined(model.graph(), {});
    return opset;
}

} // namespace nhc
