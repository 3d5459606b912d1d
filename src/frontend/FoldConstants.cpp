#include "frontend/FoldConstants.h"

#include "frontend/ConstantEvaluator.h"
#include "frontend/InferShapes.h"
#include "frontend/Subgraphs.h"
#include "support/Log.h"

#include <map>
#include <memory>
#include <set>

namespace nhc {

namespace {

class Folder {
public:
    Folder(LoadedModel &model, int opset)
        : loaded_(model), model_(model.proto), g_(*model.proto.mutable_graph()), opset_(opset) {
        for (const auto &t : g_.initializer())
            initializers_[t.name()] = &t;
        types_ = collect_value_types(g_);
        for (const auto &o : g_.output())
            graph_outputs_.insert(o.name());
    }

    int run() {
        std::vector<std::pair<std::string, HostTensor>> new_constants;
        google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
        int folded = 0;
        for (onnx::NodeProto &node : *g_.mutable_node()) {
            std::optional<std::vector<HostTensor>> outs = try_fold(node);
            if (!outs || outs->size() < static_cast<size_t>(node.output_size())) {
                kept.Add()->Swap(&node);
                continue;
            }
            for (int i = 0; i < node.output_size(); i++) {
                if (node.output(i).empty())
                    continue;
                folded_[node.output(i)] = std::make_shared<HostTensor>(std::move((*outs)[i]));
                new_constants.emplace_back(node.output(i), *folded_[node.output(i)]);
            }
            folded++;
        }
        g_.mutable_node()->Swap(&kept);
        add_initializers(new_constants);
        drop_stale_value_info();
        drop_unused_initializers();
        return folded;
    }

private:
    bool is_constant(const std::string &name) const {
        return folded_.count(name) || decoded_.count(name) || initializers_.count(name);
    }

    const HostTensor *constant(const std::string &name) {
        if (auto it = folded_.find(name); it != folded_.end())
            return it->second.get();
        if (auto it = decoded_.find(name); it != decoded_.end())
            return it->second.get();
        auto it = initializers_.find(name);
        if (it == initializers_.end())
            return nullptr;
        decoded_[name] = std::make_shared<HostTensor>(loaded_.initializer(*it->second));
        return decoded_[name].get();
    }

    std::optional<std::vector<HostTensor>> try_fold(const onnx::NodeProto &node) {
        const std::string &op = node.op_type();
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            return std::nullopt;
        if (!can_evaluate(op))
            return std::nullopt;
        if ((op == "Shape" || op == "Size") && node.input_size() == 1)
            return fold_shape_query(node);
        // Every input constant before any is decoded: a Gather's table or a MatMul's weight
        // beside a runtime operand is not copied for nothing (BERT-base's 94 MB embedding).
        for (const std::string &in : node.input())
            if (!in.empty() && !is_constant(in))
                return std::nullopt;
        std::vector<const HostTensor *> inputs;
        for (const std::string &in : node.input()) {
            if (in.empty()) {
                inputs.push_back(nullptr);
                continue;
            }
            const HostTensor *c = constant(in);
            if (!c)
                return std::nullopt;
            inputs.push_back(c);
        }
        return evaluate_node(node, inputs, opset_);
    }

    // Shape and Size only need the input's static shape, not its data.
    std::optional<std::vector<HostTensor>> fold_shape_query(const onnx::NodeProto &node) {
        Shape shape;
        if (const HostTensor *c = constant(node.input(0)))
            shape = c->shape();
        else {
            auto it = types_.find(node.input(0));
            if (it == types_.end() || !it->second.is_static())
                return std::nullopt;
            shape = it->second.shape;
        }
        return std::vector<HostTensor>{evaluate_shape_query(node, shape)};
    }

    void add_initializers(const std::vector<std::pair<std::string, HostTensor>> &values) {
        for (const auto &[name, t] : values) {
            onnx::TensorProto *p = g_.add_initializer();
            t.to_onnx(p, name);
            initializers_[name] = p;
            // IR < 4 requires every initializer to be declared as a graph input too.
            if (model_.ir_version() < 4) {
                onnx::ValueInfoProto *vi = g_.add_input();
                vi->set_name(name);
                auto *tt = vi->mutable_type()->mutable_tensor_type();
                tt->set_elem_type(p->data_type());
                auto *s = tt->mutable_shape();
                for (int64_t d : t.shape())
                    s->add_dim()->set_dim_value(d);
            }
        }
        // Initializer pointers may have moved when the repeated field grew.
        initializers_.clear();
        for (const auto &t : g_.initializer())
            initializers_[t.name()] = &t;
    }

    // Inference recorded a type for each folded output while its producer was a node, possibly
    // with a symbolic dimension (an Expand whose shape operand was not yet constant). ONNX
    // inference keeps such a recorded type over what it would infer from the new initializer,
    // so the stale entry must go, or the symbol spreads to every consumer (ViT's class token).
    void drop_stale_value_info() {
        google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
        for (auto &vi : *g_.mutable_value_info())
            if (!folded_.count(vi.name()))
                kept.Add()->Swap(&vi);
        g_.mutable_value_info()->Swap(&kept);
    }

    void drop_unused_initializers() {
        std::set<std::string> used = graph_outputs_;
        for (const auto &node : g_.node()) {
            used.insert(node.input().begin(), node.input().end());
            for (const std::string &name : captured_names(node)) // read by subgraphs: they stay
                used.insert(name);
        }
        std::set<std::string> dropped;
        google::protobuf::RepeatedPtrField<onnx::TensorProto> keep;
        for (auto &t : *g_.mutable_initializer()) {
            if (used.count(t.name()))
                keep.Add()->Swap(&t);
            else
                dropped.insert(t.name());
        }
        g_.mutable_initializer()->Swap(&keep);
        google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
        for (auto &vi : *g_.mutable_input())
            if (!dropped.count(vi.name()))
                inputs.Add()->Swap(&vi);
        g_.mutable_input()->Swap(&inputs);
        initializers_.clear();
        for (const auto &t : g_.initializer())
            initializers_[t.name()] = &t;
    }

    const LoadedModel &loaded_;
    onnx::ModelProto &model_;
    onnx::GraphProto &g_;
    int opset_;
    std::map<std::string, const onnx::TensorProto *> initializers_;
    std::map<std::string, std::shared_ptr<HostTensor>> decoded_, folded_;
    std::map<std::string, ValueType> types_;
    std::set<std::string> graph_outputs_;
};

} // namespace

int fold_constants_once(LoadedModel &model, int opset) {
    return Folder(model, opset).run();
}

FoldStats infer_and_fold(LoadedModel &model, int opset) {
    FoldStats stats;
    // Each round folds at least one node, so the node count bounds the rounds.
    int max_rounds = model.proto.graph().node_size() + 1;
    while (stats.inference_rounds < max_rounds) {
        infer_shapes(model.proto);
        stats.inference_rounds++;
        int folded = fold_constants_once(model, opset);
        stats.folded_nodes += folded;
        if (folded == 0)
            break;
    }
    log_info("folded ", stats.folded_nodes, " constant nodes in ", stats.inference_rounds,
             " inference rounds");
    return stats;
}

} // namespace nhc
