#include "frontend/OnnxOperators.h"

#include <onnx/defs/schema.h>

#include <map>

namespace nhc {

std::vector<std::string> onnx_operators(int opset) {
    // Per name, the latest definition at or below the opset.
    std::map<std::string, const onnx::OpSchema *> latest;
    static const std::vector<onnx::OpSchema> all =
        onnx::OpSchemaRegistry::get_all_schemas_with_history();
    for (const onnx::OpSchema &s : all) {
        if (!s.domain().empty() || s.since_version() > opset)
            continue;
        const onnx::OpSchema *&seen = latest[s.Name()];
        if (!seen || s.since_version() > seen->since_version())
            seen = &s;
    }
    std::vector<std::string> names;
    for (const auto &[name, schema] : latest)
        if (!schema->Deprecated())
            names.push_back(name);
    return names; // a sorted map's keys
}

} // namespace nhc
