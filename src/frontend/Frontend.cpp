#include "frontend/Frontend.h"

#include "frontend/CheckModel.h"
#include "frontend/ConstantOperands.h"
#include "frontend/ConvertOpset.h"
#include "frontend/DecomposeEinsum.h"
#include "frontend/FoldConstants.h"
#include "frontend/FreezeInputs.h"
#include "frontend/GuardInference.h"
#include "frontend/ImportGraph.h"
#include "frontend/LoadModel.h"
#include "support/Log.h"

namespace nhc {

LoadedModel prepare_model(const std::string &model_path, const FrontendOptions &options,
                          int *opset_out, int *declared_out) {
    install_inference_guards(); // before ONNX's converter or inference sees a node
    LoadedModel model;
    {
        TimedStep step("frontend: load model");
        model = load_model_file(model_path);
    }
    int declared_opset, opset;
    {
        TimedStep step("frontend: onnx checker");
        declared_opset = check_model(model.proto);
    }
    if (!options.frozen_inputs.empty()) {
        TimedStep step("frontend: freeze inputs");
        freeze_inputs(model.proto, options.frozen_inputs);
    }
    {
        // ONNX's version converter trusts the same operands as its inference: a Gemm-6 of a
        // rank-1 B made it read memory it had not written (ASan, with MALLOC_PERTURB_). The
        // declared types are checked here; intermediate values after inference.
        TimedStep step("frontend: check guarded nodes");
        check_guarded_nodes(model.proto.graph());
    }
    {
        TimedStep step("frontend: convert opset");
        opset = convert_to_canonical_opset(model.proto, declared_opset);
        model.reattach_in_place();
    }
    {
        TimedStep step("frontend: apply input shapes");
        apply_input_shapes(model.proto, options.input_shapes);
    }
    {
        TimedStep step("frontend: infer shapes and fold");
        infer_and_fold(model, opset);
    }
    {
        TimedStep step("frontend: decompose Einsum");
        if (int n = decompose_einsums(model.proto); n > 0) {
            log_info(n, " Einsum node(s) as MatMuls with transposes and reshapes");
            infer_and_fold(model, opset);
        }
    }
    if (opset_out)
        *opset_out = opset;
    if (declared_out)
        *declared_out = declared_opset;
    return model;
}

Graph import_prepared_model(LoadedModel &model, int opset, int declared_opset) {
    {
        TimedStep step("frontend: check constant operands");
        check_constant_operands(model.proto);
    }
    TimedStep step("frontend: import graph");
    Graph g = import_graph(model, opset, declared_opset);
    log_info("graph '", g.name, "': ", g.nodes.size(), " nodes, ", g.inputs.size(), " inputs, ",
             g.outputs.size(), " outputs, ", g.constant_bytes(), " bytes of constants");
    return g;
}

Graph run_frontend(const std::string &model_path, const FrontendOptions &options) {
    int opset = 0, declared_opset = 0;
    LoadedModel model = prepare_model(model_path, options, &opset, &declared_opset);
    return import_prepared_model(model, opset, declared_opset);
}

} // namespace nhc
