#include "frontend/ConstantOperands.h"

#include "support/Error.h"

#include <map>
#include <set>

namespace nhc {

namespace {

/** Operator -> the input positions the compiler needs as values (its algorithm or graph
 *  lowering reads them at compile time). ONNX names the operands in its operator docs. */
const std::map<std::string, std::vector<int>> &operands_needed() {
    static const std::map<std::string, std::vector<int>> table = {
        {"BlackmanWindow", {0}}, // size
        {"Compress", {1}},       // condition: the output's length
        {"Dropout", {2}},        // training_mode
        {"HammingWindow", {0}},  // size
        {"HannWindow", {0}},     // size
        {"Pad", {1, 2, 3}},      // pads, constant_value, axes
        {"Range", {0, 1, 2}},    // start, limit, delta
        {"ReduceSum", {1}},      // axes (opset 13)
        {"Resize", {2}},         // scales
        {"Slice", {1, 2, 3, 4}}, // starts, ends, axes, steps
        {"Upsample", {1}},       // scales
    };
    return table;
}

class OperandTracer {
public:
    explicit OperandTracer(const onnx::GraphProto &g) {
        std::set<std::string> initializers;
        for (const auto &t : g.initializer())
            initializers.insert(t.name());
        for (const auto &vi : g.input())
            if (!initializers.count(vi.name()))
                runtime_inputs_.insert(vi.name());
        for (const auto &n : g.node())
            for (const std::string &o : n.output())
                producer_[o] = &n;
    }

    /** The runtime inputs whose values reach `value`. */
    std::set<std::string> sources(const std::string &value) {
        std::set<std::string> found, seen;
        visit(value, seen, found);
        return found;
    }

private:
    void visit(const std::string &v, std::set<std::string> &seen, std::set<std::string> &found) {
        if (v.empty() || !seen.insert(v).second)
            return;
        if (runtime_inputs_.count(v)) {
            found.insert(v);
            return;
        }
        auto it = producer_.find(v);
        if (it == producer_.end())
            return;
        const onnx::NodeProto &n = *it->second;
        if (n.op_type() == "Shape" || n.op_type() == "Size")
            return; // a shape query: static once the shapes are
        for (const std::string &in : n.input())
            visit(in, seen, found);
    }

    std::set<std::string> runtime_inputs_;
    std::map<std::string, const onnx::NodeProto *> producer_;
};

std::string describe(const onnx::NodeProto &n) {
    return n.op_type() + " '" + n.name() + "'";
}

} // namespace

std::vector<RuntimeOperand> find_runtime_operands(const onnx::ModelProto &model) {
    OperandTracer tracer(model.graph());
    std::vector<RuntimeOperand> found;
    for (const onnx::NodeProto &n : model.graph().node()) {
        auto it = operands_needed().find(n.op_type());
        if (!n.domain().empty() && n.domain() != "ai.onnx")
            continue;
        if (it == operands_needed().end())
            continue;
        for (int i : it->second) {
            if (i >= n.input_size() || n.input(i).empty())
                continue;
            std::set<std::string> from = tracer.sources(n.input(i));
            if (!from.empty())
                found.push_back({describe(n), i, n.input(i), {from.begin(), from.end()}});
        }
    }
    return found;
}

std::vector<std::string> inputs_to_freeze(const onnx::ModelProto &model) {
    std::set<std::string> all;
    for (const RuntimeOperand &r : find_runtime_operands(model))
        all.insert(r.inputs.begin(), r.inputs.end());
    return {all.begin(), all.end()};
}

void check_constant_operands(const onnx::ModelProto &model) {
    std::vector<RuntimeOperand> found = find_runtime_operands(model);
    if (found.empty())
        return;
    const RuntimeOperand &r = found.front();
    std::string inputs, flags;
    for (const std::string &in : r.inputs) {
        inputs += (inputs.empty() ? "'" : ", '") + in + "'";
        flags += " --freeze-input " + in + "=FILE";
    }
    user_error("NHC_EALG002", r.node, ": input ", r.index, " ('", r.operand,
               "') must be known at compile time, but its value comes from the runtime input(s) ",
               inputs, "; export it as a constant, or specialise the NEFF to one value with",
               flags);
}

} // namespace nhc
