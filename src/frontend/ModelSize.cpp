#include "frontend/ModelSize.h"

#include "graph/GraphLimits.h"
#include "support/Error.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nhc {

namespace {

/** A model-local function as nodes call it: (domain, name). */
using FunctionKey = std::pair<std::string, std::string>;

std::string describe(const FunctionKey &f) {
    return f.first.empty() ? f.second : f.first + "." + f.second;
}

/** Counts stop one past the limit: enough to refuse, and no sum can overflow. */
long capped(long n) {
    return std::min(n, kMaxModelNodes + 1);
}

/** Calls `visit` on every node of `nodes` and of the graphs nested in their attributes. The
 *  recursion is as deep as the nesting, which protobuf's parser bounds (100 nested messages). */
template <typename Nodes, typename Visit>
void for_each_node(const Nodes &nodes, const Visit &visit) {
    for (const onnx::NodeProto &node : nodes) {
        visit(node);
        for (const auto &a : node.attribute()) {
            if (a.has_g())
                for_each_node(a.g().node(), visit);
            for (const auto &sub : a.graphs())
                for_each_node(sub.node(), visit);
        }
    }
}

/** The nodes `nodes` expand to: each one, plus for a call of a local function the nodes its body
 *  expands to (`expanded`, known for every function called). */
template <typename Nodes>
long expanded_nodes(const Nodes &nodes, const std::map<FunctionKey, long> &expanded) {
    long n = 0;
    for_each_node(nodes, [&](const onnx::NodeProto &node) {
        auto callee = expanded.find({node.domain(), node.op_type()});
        n = capped(n + 1 + (callee == expanded.end() ? 0 : callee->second));
    });
    return n;
}

/** Each local function's expanded node count, callees before callers (Kahn's order over the call
 *  graph, without recursion); NHC_EONX012 for a function declared twice or on a call cycle. */
std::map<FunctionKey, long> expand_functions(const onnx::ModelProto &model) {
    std::map<FunctionKey, const onnx::FunctionProto *> functions;
    for (const auto &f : model.functions())
        if (!functions.emplace(FunctionKey{f.domain(), f.name()}, &f).second)
            user_error("NHC_EONX012", "model '", model.graph().name(),
                       "' declares the local function '", describe({f.domain(), f.name()}),
                       "' twice; a function's domain and name identify it");
    std::map<FunctionKey, std::set<FunctionKey>> callers;
    std::map<FunctionKey, size_t> uncounted_callees;
    std::deque<FunctionKey> ready;
    for (const auto &[key, f] : functions) {
        std::set<FunctionKey> callees;
        for_each_node(f->node(), [&](const onnx::NodeProto &node) {
            FunctionKey callee{node.domain(), node.op_type()};
            if (functions.count(callee))
                callees.insert(callee);
        });
        for (const auto &callee : callees)
            callers[callee].insert(key);
        uncounted_callees[key] = callees.size();
        if (callees.empty())
            ready.push_back(key);
    }
    std::map<FunctionKey, long> expanded;
    for (; !ready.empty(); ready.pop_front()) {
        const FunctionKey key = ready.front();
        expanded[key] = expanded_nodes(functions.at(key)->node(), expanded);
        for (const auto &caller : callers[key])
            if (--uncounted_callees[caller] == 0)
                ready.push_back(caller);
    }
    for (const auto &[key, f] : functions)
        if (!expanded.count(key))
            user_error("NHC_EONX012", "model '", model.graph().name(), "': the local function '",
                       describe(key), "' calls itself, directly or through other local functions ",
                       "(or calls one that does); ONNX functions cannot recurse");
    return expanded;
}

} // namespace

void check_model_size(const onnx::ModelProto &model) {
    const onnx::GraphProto &g = model.graph();
    const std::map<FunctionKey, long> expanded = expand_functions(model);
    long nodes = expanded_nodes(g.node(), expanded);
    for (const auto &[function, body] : expanded) // each body is checked once besides its calls
        nodes = capped(nodes + body);
    if (nodes > kMaxModelNodes)
        user_error("NHC_EONX011", "model '", g.name(), "' has more than ", kMaxModelNodes,
                   " nodes (its graph, subgraphs and local functions, each call of a function "
                   "counted as its nodes); the compiler takes at most ",
                   kMaxModelNodes);
    if (long io = long(g.input_size()) + g.output_size(); io > kMaxGraphInputsOutputs)
        user_error("NHC_EONX011", "model '", g.name(), "' declares ", g.input_size(),
                   " graph inputs and ", g.output_size(), " outputs; the compiler takes at most ",
                   kMaxGraphInputsOutputs, " together");
}

} // namespace nhc
