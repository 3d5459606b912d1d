#include "frontend/Frontend.h"

#include "frontend/CheckModel.h"
#include "frontend/ConvertOpset.h"
#include "frontend/FoldConstants.h"
#include "frontend/ImportGraph.h"
#include "frontend/LoadModel.h"
#include "support/Log.h"

namespace nhc {

Graph run_frontend(const std::string &model_path, const FrontendOptions &options) {
    onnx::ModelProto model;
    {
        TimedStep step("frontend: load model");
        model = load_model_file(model_path);
    }
    int declared_opset, opset;
    {
        TimedStep step("frontend: onnx checker");
        declared_opset = check_model(model);
    }
    {
        TimedStep step("frontend: convert opset");
        opset = convert_to_canonical_opset(model, declared_opset);
    }
    {
        TimedStep step("frontend: apply input shapes");
        apply_input_shapes(model, options.input_shapes);
    }
    {
        TimedStep step("frontend: infer shapes and fold");
        infer_and_fold(model, opset);
    }
    TimedStep step("frontend: import graph");
    Graph g = import_graph(model, opset, declared_opset);
    log_info("graph '", g.name, "': ", g.nodes.size(), " nodes, ", g.inputs.size(), " inputs, ",
             g.outputs.size(), " outputs, ", g.constant_bytes(), " bytes of constants");
    return g;
}

} // namespace nhc
