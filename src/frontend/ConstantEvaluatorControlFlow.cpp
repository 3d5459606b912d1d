/** \file
 * Host evaluation of ONNX's control flow, If and Loop (Operators.md, opsets 13-17): their
 * subgraphs run node by node on the host evaluators, reading the node's scope (the values around
 * it) for the names they capture. Tensors only: a subgraph holding sequences or optionals is
 * refused by the front end before it gets here (NHC_EDTY001). Scan is not evaluated.
 */

#include "frontend/ConstantEvaluator.h"
#include "frontend/ConstantEvaluatorSupport.h"

#include <cstring>
#include <map>

namespace nhc {

namespace {

using folding::Ctx;

/** One subgraph (a branch, or a loop's body) run on given inputs over the scope around it. */
class SubgraphRun {
public:
    SubgraphRun(const Ctx &c, const onnx::GraphProto &g, const ValueScope &outer)
        : c_(c), g_(g), outer_(outer) {
        for (const auto &t : g.initializer())
            initializers_[t.name()] = HostTensor::from_onnx(t, t.name());
    }

    /** The graph's outputs, in order, with its inputs bound to `inputs`; nullopt when a node
     *  cannot be evaluated. */
    std::optional<std::vector<HostTensor>> run(std::vector<HostTensor> inputs) {
        if (inputs.size() != size_t(g_.input_size()))
            c_.fail("its subgraph '" + g_.name() + "' takes " + std::to_string(g_.input_size()) +
                    " inputs; " + std::to_string(inputs.size()) + " given");
        locals_.clear();
        for (size_t i = 0; i < inputs.size(); i++)
            locals_[g_.input(int(i)).name()] = std::move(inputs[i]);
        const ValueScope here = [this](const std::string &name) { return find(name); };
        for (const auto &n : g_.node()) {
            std::vector<const HostTensor *> in;
            for (const auto &name : n.input())
                in.push_back(name.empty() ? nullptr : held(name, n));
            std::optional<std::vector<HostTensor>> out =
                evaluate_node_in_scope(n, in, c_.opset, here);
            if (!out)
                return std::nullopt;
            for (size_t i = 0; i < out->size() && i < size_t(n.output_size()); i++)
                if (!n.output(int(i)).empty())
                    locals_[n.output(int(i))] = std::move((*out)[i]);
        }
        std::vector<HostTensor> outputs;
        for (const auto &vi : g_.output())
            outputs.push_back(*held(vi.name(), {}));
        return outputs;
    }

private:
    const HostTensor *find(const std::string &name) const {
        if (auto it = locals_.find(name); it != locals_.end())
            return &it->second;
        if (auto it = initializers_.find(name); it != initializers_.end())
            return &it->second;
        return outer_(name);
    }
    const HostTensor *held(const std::string &name, const onnx::NodeProto &reader) const {
        const HostTensor *t = find(name);
        if (!t)
            c_.fail("its subgraph '" + g_.name() + "' reads '" + name + "'" +
                    (reader.op_type().empty()
                         ? ""
                         : " (" + reader.op_type() + " '" + reader.name() + "')") +
                    ", which nothing computes");
        return t;
    }

    const Ctx &c_;
    const onnx::GraphProto &g_;
    const ValueScope &outer_;
    std::map<std::string, HostTensor> initializers_, locals_;
};

const onnx::GraphProto &graph_attr(const Ctx &c, const char *name) {
    const onnx::AttributeProto *a = c.attr(name);
    if (!a || !a->has_g())
        c.fail(std::string("it has no '") + name + "' graph");
    return a->g();
}

bool truth(const Ctx &c, const HostTensor &t, const char *what) {
    if (t.numel() != 1)
        c.fail(std::string(what) + " must hold one value; found shape " + shape_str(t.shape()));
    return dtype_is_float(t.dtype()) ? t.get_f64(0) != 0 : t.get_i64(0) != 0;
}

folding::Outputs run_if(const Ctx &c, const ValueScope &outer) {
    bool taken = truth(c, c.input(0), "cond");
    const onnx::GraphProto &branch = graph_attr(c, taken ? "then_branch" : "else_branch");
    return SubgraphRun(c, branch, outer).run({});
}

/** A Loop's scan output: each iteration's value stacked along a new first axis. */
HostTensor stacked(const Ctx &c, const std::vector<HostTensor> &parts,
                   const onnx::ValueInfoProto &declared) {
    if (parts.empty()) { // no iteration: [0, the declared element shape] (unknown dims 0)
        const auto &type = declared.type().tensor_type();
        auto dt = dtype_from_onnx(type.elem_type());
        Shape shape = {0};
        for (const auto &d : type.shape().dim())
            shape.push_back(d.has_dim_value() ? d.dim_value() : 0);
        return HostTensor(dt ? *dt : DType::Float32, shape);
    }
    Shape shape = parts[0].shape();
    shape.insert(shape.begin(), int64_t(parts.size()));
    HostTensor out(parts[0].dtype(), shape);
    std::vector<uint8_t> &bytes = out.mutable_bytes();
    size_t at = 0;
    for (const HostTensor &p : parts) {
        if (p.shape() != parts[0].shape() || p.dtype() != parts[0].dtype())
            c.fail("scan output '" + declared.name() +
                   "' changes shape or type between "
                   "iterations: " +
                   shapes_str({parts[0].shape(), p.shape()}));
        std::memcpy(bytes.data() + at, p.bytes().data(), p.bytes().size());
        at += p.bytes().size();
    }
    return out;
}

folding::Outputs run_loop(const Ctx &c, const ValueScope &outer) {
    const onnx::GraphProto &body = graph_attr(c, "body");
    std::optional<int64_t> trips;
    if (c.has_input(0))
        trips = c.input(0).get_i64(0);
    bool go_on = c.has_input(1) ? truth(c, c.input(1), "cond") : true;
    std::vector<HostTensor> carried;
    for (size_t i = 2; i < c.in.size(); i++)
        carried.push_back(c.input(i));
    const int scans = body.output_size() - 1 - int(carried.size());
    if (scans < 0 || body.input_size() != 2 + int(carried.size()))
        c.fail("its body has " + std::to_string(body.input_size()) + " inputs and " +
               std::to_string(body.output_size()) + " outputs for " +
               std::to_string(carried.size()) + " loop-carried values");
    std::vector<std::vector<HostTensor>> scanned(static_cast<size_t>(scans));
    SubgraphRun run(c, body, outer);
    for (int64_t i = 0; (!trips || i < *trips) && go_on; i++) {
        if (i == kMaxFoldedElements)
            c.fail("it ran " + std::to_string(i) +
                   " iterations without its condition turning "
                   "false");
        std::vector<HostTensor> in = {HostTensor::scalar_i64(i),
                                      HostTensor::scalar_i64(1, DType::Bool)};
        in.insert(in.end(), carried.begin(), carried.end());
        std::optional<std::vector<HostTensor>> out = run.run(std::move(in));
        if (!out)
            return std::nullopt;
        go_on = truth(c, (*out)[0], "the body's condition");
        for (size_t v = 0; v < carried.size(); v++)
            carried[v] = std::move((*out)[1 + v]);
        for (size_t s = 0; s < size_t(scans); s++)
            scanned[s].push_back(std::move((*out)[1 + carried.size() + s]));
    }
    const int first_scan = 1 + int(carried.size()); // the body's outputs: cond, carried, scans
    std::vector<HostTensor> outputs = std::move(carried);
    for (int s = 0; s < scans; s++)
        outputs.push_back(stacked(c, scanned[size_t(s)], body.output(first_scan + s)));
    return outputs;
}

} // namespace

std::optional<std::vector<HostTensor>>
evaluate_node_in_scope(const onnx::NodeProto &node, const std::vector<const HostTensor *> &inputs,
                       int opset, const ValueScope &outer) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!default_domain || (node.op_type() != "If" && node.op_type() != "Loop"))
        return evaluate_node(node, inputs, opset);
    Ctx c{node, inputs, opset};
    return node.op_type() == "If" ? run_if(c, outer) : run_loop(c, outer);
}

} // namespace nhc
