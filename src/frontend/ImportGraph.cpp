#include "frontend/ImportGraph.h"

#include "frontend/InferShapes.h"
#include "support/Error.h"

#include <set>

namespace nhc {

namespace {

AttrValue convert_attr(const onnx::AttributeProto &a, const Node &node) {
    using AP = onnx::AttributeProto;
    switch (a.type()) {
    case AP::INT:
        return a.i();
    case AP::FLOAT:
        return static_cast<double>(a.f());
    case AP::STRING:
        return a.s();
    case AP::INTS:
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case AP::FLOATS:
        return std::vector<double>(a.floats().begin(), a.floats().end());
    case AP::STRINGS:
        return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case AP::TENSOR:
        return HostTensor::from_onnx(a.t(), node.name + "." + a.name());
    default:
        user_error("NHC_EONX008", "attribute '", a.name(), "' of ", node.describe(), " has type ",
                   AP::AttributeType_Name(a.type()), ", which the graph IR cannot hold");
    }
}

// Lists every input with a symbolic or unknown dim, as "--input-shape" hints.
std::string symbolic_input_hint(const onnx::GraphProto &g,
                                const std::map<std::string, ValueType> &types,
                                const std::set<std::string> &initializers) {
    std::string hint;
    for (const auto &vi : g.input()) {
        if (initializers.count(vi.name()))
            continue;
        const ValueType &t = types.at(vi.name());
        if (t.is_static())
            continue;
        std::string dims;
        for (size_t i = 0; i < t.shape.size(); i++)
            dims +=
                (i ? "," : "") + (t.shape[i] < 0 ? std::string("?") : std::to_string(t.shape[i]));
        hint += " '" + vi.name() + "' [" + dims + "]";
    }
    return hint.empty() ? " none (the dynamic dimension is computed inside the graph)" : hint;
}

class Importer {
public:
    Importer(LoadedModel &model) : loaded_(model), model_(model.proto), g_(model.proto.graph()) {
        types_ = collect_value_types(g_);
        for (const auto &t : g_.initializer())
            initializers_.insert(t.name());
    }

    Graph run(int opset, int original_opset) {
        Graph graph;
        graph.name = g_.name().empty() ? "main" : g_.name();
        graph.opset = opset;
        graph.original_opset = original_opset;
        reject_control_flow();
        for (onnx::TensorProto &t : *model_.mutable_graph()->mutable_initializer()) {
            Value v = typed_value(t.name(), "weight");
            v.constant = std::make_shared<const HostTensor>(loaded_.initializer(t));
            graph.values[t.name()] = v;
            std::string().swap(*t.mutable_raw_data()); // freed: the next weight reuses it
        }
        for (const auto &vi : g_.input()) {
            if (initializers_.count(vi.name()))
                continue; // an initializer listed as an input (IR < 4) is a weight, not an input
            graph.values[vi.name()] = typed_value(vi.name(), "graph input");
            graph.inputs.push_back(vi.name());
        }
        int index = 0;
        for (const auto &np : g_.node())
            graph.nodes.push_back(import_node(np, index++, graph));
        for (const auto &vi : g_.output()) {
            if (!graph.has_value(vi.name()))
                graph.values[vi.name()] = typed_value(vi.name(), "graph output");
            graph.outputs.push_back(vi.name());
        }
        graph.verify();
        return graph;
    }

private:
    void reject_control_flow() const {
        std::string found;
        for (const auto &np : g_.node())
            for (const auto &a : np.attribute())
                if (a.has_g() || a.graphs_size() > 0) {
                    found += " " + np.op_type() + " '" + np.name() + "'";
                    break;
                }
        if (!found.empty())
            user_error("NHC_EUOC003",
                       "control-flow operators with subgraphs are not supported; found", found,
                       ". Unroll the loop or select the branch before export");
    }

    Value typed_value(const std::string &name, const char *role) const {
        auto it = types_.find(name);
        if (it == types_.end() || it->second.elem_type == 0 || !it->second.has_shape) {
            if (it != types_.end() && !it->second.is_tensor)
                user_error("NHC_EDTY001", "tensor '", name, "' (", role,
                           ") is not a tensor (sequence, map or optional types are not supported)");
            user_error("NHC_EMOD025", "tensor '", name, "' (", role, ")",
                       "' has an unknown type or shape after shape inference; only static shapes "
                       "are supported. Inputs with dynamic dims:",
                       symbolic_input_hint(g_, types_, initializers_),
                       " (fix them with --input-shape name=d0,d1,...)");
        }
        const ValueType &t = it->second;
        std::optional<DType> dt = dtype_from_onnx(t.elem_type);
        if (!dt)
            user_error("NHC_EDTY001", "tensor '", name, "' (", role, ") has element type ",
                       onnx_elem_type_name(t.elem_type),
                       "; expected a numeric or bool type (string and complex are not supported)");
        if (!t.is_static()) {
            std::string sym = t.symbol_of_first_unknown.empty()
                                  ? std::string("an unknown dimension")
                                  : "symbolic dimension '" + t.symbol_of_first_unknown + "'";
            user_error("NHC_EMOD025", "tensor '", name, "' (", role, ") has ", sym, " in shape ",
                       shape_str(t.shape),
                       "; only static shapes are supported. Inputs with "
                       "dynamic dims:",
                       symbolic_input_hint(g_, types_, initializers_),
                       " (fix them with --input-shape name=d0,d1,...)");
        }
        return Value{name, *dt, t.shape, nullptr};
    }

    Node import_node(const onnx::NodeProto &np, int index, Graph &graph) const {
        Node node;
        node.name = np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
        node.op_type = np.op_type();
        node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
        node.inputs.assign(np.input().begin(), np.input().end());
        node.outputs.assign(np.output().begin(), np.output().end());
        for (const auto &a : np.attribute())
            node.attrs[a.name()] = convert_attr(a, node);
        if (node.op_type == "Constant" && node.domain.empty())
            user_error("NHC_EDTY001", node.describe(),
                       " could not be folded: only numeric tensor constants are supported");
        for (const std::string &out : node.outputs)
            if (!out.empty())
                graph.values[out] = typed_value(out, ("output of " + node.describe()).c_str());
        return node;
    }

    const LoadedModel &loaded_;
    onnx::ModelProto &model_;
    const onnx::GraphProto &g_;
    std::map<std::string, ValueType> types_;
    std::set<std::string> initializers_;
};

} // namespace

Graph import_graph(LoadedModel &model, int opset, int original_opset) {
    return Importer(model).run(opset, original_opset);
}

} // namespace nhc
