/** \file
 * Host evaluation of ONNX's control flow, If, Loop and Scan (Operators.md, opsets 9-17): their
 * subgraphs run node by node on the host evaluators, reading the node's scope (the values around
 * it) for the names they capture. Tensors only: a subgraph holding sequences or optionals is
 * refused by the front end before it gets here (NHC_EDTY001).
 */

#include "frontend/ConstantEvaluator.h"
#include "frontend/ConstantEvaluatorSupport.h"

#include <algorithm>
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

/** The extents of `s` before `axis` and after it (the outer and inner counts of a slice). */
std::pair<int64_t, int64_t> around(const Shape &s, int64_t axis) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < int64_t(s.size()); d++)
        (d < axis ? outer : inner) *= d == axis ? 1 : s[size_t(d)];
    return {outer, inner};
}

/** Element `t` of `x` along `axis`: x without that axis. */
HostTensor slice_at(const HostTensor &x, int64_t axis, int64_t t) {
    Shape shape = x.shape();
    const int64_t length = shape[size_t(axis)];
    shape.erase(shape.begin() + axis);
    HostTensor part(x.dtype(), shape);
    const auto [outer, inner] = around(x.shape(), axis);
    const size_t row = size_t(inner) * size_t(dtype_size(x.dtype()));
    for (int64_t o = 0; o < outer; o++)
        std::memcpy(part.mutable_bytes().data() + size_t(o) * row,
                    x.bytes().data() + size_t(o * length + t) * row, row);
    return part;
}

/** `parts` stacked along a new `axis` (each part's shape with the count inserted there). */
HostTensor stacked_along(const Ctx &c, const std::vector<HostTensor> &parts, int64_t axis,
                         const onnx::ValueInfoProto &declared) {
    HostTensor first = stacked(c, parts, declared); // checks the parts, stacks along axis 0
    if (axis == 0 || parts.empty())
        return first;
    Shape shape = parts[0].shape();
    const int64_t count = int64_t(parts.size());
    shape.insert(shape.begin() + axis, count);
    HostTensor out(first.dtype(), shape);
    const auto [outer, inner] = around(shape, axis);
    const size_t row = size_t(inner) * size_t(dtype_size(first.dtype()));
    for (int64_t t = 0; t < count; t++)
        for (int64_t o = 0; o < outer; o++)
            std::memcpy(out.mutable_bytes().data() + size_t(o * count + t) * row,
                        parts[size_t(t)].bytes().data() + size_t(o) * row, row);
    return out;
}

/** An attribute of one int per scan input or output (`count`), each defaulting to 0. */
std::vector<int64_t> per_scan(const Ctx &c, const char *name, size_t count) {
    std::vector<int64_t> v = c.attr_ints(name).value_or(std::vector<int64_t>(count, 0));
    if (v.size() != count)
        c.fail(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
               " values for " + std::to_string(count));
    return v;
}

folding::Outputs run_scan(const Ctx &c, const ValueScope &outer) {
    const onnx::GraphProto &body = graph_attr(c, "body");
    const int64_t scan_inputs = c.attr_int("num_scan_inputs", 0);
    const int64_t states = int64_t(c.in.size()) - scan_inputs;
    const int64_t scan_outputs = body.output_size() - states;
    if (c.opset < 9 || scan_inputs < 1 || states < 0 || scan_outputs < 0 ||
        body.input_size() != int(c.in.size()))
        c.fail("its body (" + std::to_string(body.input_size()) + " inputs, " +
               std::to_string(body.output_size()) + " outputs) does not suit " +
               std::to_string(c.in.size()) + " inputs of which " + std::to_string(scan_inputs) +
               " are scanned (opset 9 or later)");
    const std::vector<int64_t> in_axes = per_scan(c, "scan_input_axes", size_t(scan_inputs)),
                               in_dirs = per_scan(c, "scan_input_directions", size_t(scan_inputs)),
                               out_axes = per_scan(c, "scan_output_axes", size_t(scan_outputs)),
                               out_dirs =
                                   per_scan(c, "scan_output_directions", size_t(scan_outputs));
    std::vector<HostTensor> carried;
    for (int64_t i = 0; i < states; i++)
        carried.push_back(c.input(size_t(i)));
    int64_t length = -1;
    std::vector<int64_t> axis(static_cast<size_t>(scan_inputs));
    for (int64_t j = 0; j < scan_inputs; j++) {
        const HostTensor &x = c.input(size_t(states + j));
        axis[size_t(j)] = c.norm_axis(in_axes[size_t(j)], x.rank());
        const int64_t n = x.shape()[size_t(axis[size_t(j)])];
        if (length >= 0 && n != length)
            c.fail("its scan inputs have lengths " + std::to_string(length) + " and " +
                   std::to_string(n));
        length = n;
    }
    std::vector<std::vector<HostTensor>> scanned(static_cast<size_t>(scan_outputs));
    SubgraphRun run(c, body, outer);
    for (int64_t t = 0; t < length; t++) {
        std::vector<HostTensor> in = carried;
        for (int64_t j = 0; j < scan_inputs; j++)
            in.push_back(slice_at(c.input(size_t(states + j)), axis[size_t(j)],
                                  in_dirs[size_t(j)] ? length - 1 - t : t));
        std::optional<std::vector<HostTensor>> out = run.run(std::move(in));
        if (!out)
            return std::nullopt;
        for (int64_t v = 0; v < states; v++)
            carried[size_t(v)] = std::move((*out)[size_t(v)]);
        for (int64_t k = 0; k < scan_outputs; k++)
            scanned[size_t(k)].push_back(std::move((*out)[size_t(states + k)]));
    }
    std::vector<HostTensor> outputs = std::move(carried);
    for (int64_t k = 0; k < scan_outputs; k++) {
        std::vector<HostTensor> &parts = scanned[size_t(k)];
        if (out_dirs[size_t(k)]) // the last iteration's value first
            std::reverse(parts.begin(), parts.end());
        const int64_t rank = parts.empty() ? 0 : parts[0].rank() + 1;
        const int64_t a = parts.empty() ? 0 : c.norm_axis(out_axes[size_t(k)], rank);
        outputs.push_back(stacked_along(c, parts, a, body.output(int(states + k))));
    }
    return outputs;
}

} // namespace

std::optional<std::vector<HostTensor>>
evaluate_node_in_scope(const onnx::NodeProto &node, const std::vector<const HostTensor *> &inputs,
                       int opset, const ValueScope &outer) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const std::string &op = node.op_type();
    if (!default_domain || (op != "If" && op != "Loop" && op != "Scan"))
        return evaluate_node(node, inputs, opset);
    Ctx c{node, inputs, opset};
    return op == "If" ? run_if(c, outer) : op == "Loop" ? run_loop(c, outer) : run_scan(c, outer);
}

} // namespace nhc
