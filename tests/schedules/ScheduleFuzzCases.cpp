// Schedule fuzzer, part one (ScheduleFuzz.h): the cases. Each family builds an ONNX graph of one
// node, or of a chain the code generator fuses into one group (gemm_relu, add_relu,
// scale_softmax, attention), with shapes drawn from the generator (divisible and not by the default
// tiles), seeded inputs and constants, the host reference of that graph (alg::run_reference), then
// the graph passes of the compiler (a Conv becomes ConvTaps, a pooling PoolTaps, a MatMul and its
// bias a Gemm) and the default schedule of the group that remains, printed as one block (of
// several nodes for a fused group): the starting point of every variant.

#include "ScheduleFuzz.h"

#include "algorithms/Reference.h"
#include "driver/Codegen.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"
#include "target/Target.h"

namespace nhc::fuzz {

uint64_t Rng::next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

namespace {

HostTensor random_tensor(const Shape &shape, Rng &rng) {
    HostTensor t(DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); i++)
        t.set_f64(i, double(rng.below(2000) - 1000) / 1000.0);
    return t;
}

/** A one-node graph: runtime inputs in0, in1, ... (or constants where `constant` says so). */
struct GraphBuilder {
    Graph g;
    Node n;
    Rng &rng;
    std::map<std::string, HostTensor> inputs;
    int named = 0; ///< inputs and constants so far: in0, in1, ... across the graph's nodes

    GraphBuilder(const std::string &op, Rng &r) : rng(r) {
        g.opset = 17;
        n.name = "node";
        n.op_type = op;
    }
    void input(const Shape &shape, bool constant = false) {
        add_input(random_tensor(shape, rng), constant);
    }
    /** A constant divisor: random_tensor's draw moved to [0.5, 1.5), so never 0 (a Div by 0 is
     *  inf or NaN on device, and the reference need not agree: seed 2's attention drew 0). One
     *  draw per element, as random_tensor, so the cases drawn after it do not change. */
    void divisor(const Shape &shape) {
        HostTensor t = random_tensor(shape, rng);
        for (int64_t i = 0; i < t.numel(); i++)
            t.set_f64(i, 1.0 + t.get_f64(i) / 2);
        add_input(t, true);
    }
    void add_input(const HostTensor &t, bool constant) {
        const Shape &shape = t.shape();
        std::string name = "in" + std::to_string(named++);
        Value v{name, DType::Float32, shape, nullptr};
        if (constant) {
            v.constant = std::make_shared<HostTensor>(t);
        } else {
            g.inputs.push_back(name);
            inputs[name] = t;
        }
        g.values[name] = v;
        n.inputs.push_back(name);
    }
    void constant_ints(const std::vector<int64_t> &values) {
        std::string name = "in" + std::to_string(named++);
        auto t = std::make_shared<HostTensor>(HostTensor::from_i64(values));
        g.values[name] = Value{name, DType::Int64, t->shape(), t};
        n.inputs.push_back(name);
    }
    Graph finish(const Shape &out) {
        g.values["out"] = Value{"out", DType::Float32, out, nullptr};
        n.outputs = {"out"};
        g.outputs = {"out"};
        g.nodes.push_back(n);
        return g;
    }
    /** Ends the node built so far with output `out` of shape `shape`, and starts a node `op`
     *  that reads it (a chain the code generator fuses into one group). */
    void then(const std::string &op, const Shape &shape) {
        std::string v = "t" + std::to_string(g.nodes.size());
        g.values[v] = Value{v, DType::Float32, shape, nullptr};
        n.outputs = {v};
        g.nodes.push_back(n);
        n = Node{};
        n.name = "node_" + std::to_string(g.nodes.size());
        n.op_type = op;
        n.inputs = {v};
    }
};

int64_t pick(Rng &rng, const std::vector<int64_t> &v) {
    return rng.pick(v);
}

Graph matmul(GraphBuilder &b, bool gemm) {
    int64_t m = pick(b.rng, {32, 64, 100, 128, 192}), k = pick(b.rng, {64, 128, 200, 256}),
            n = pick(b.rng, {96, 128, 256, 384, 600});
    bool trans_b = gemm && b.rng.chance(50);
    int64_t batch = !gemm && b.rng.chance(30) ? 2 : 0; // MatMul: a batch of products
    b.input(batch ? Shape{batch, m, k} : Shape{m, k});
    b.input(trans_b ? Shape{n, k} : batch ? Shape{batch, k, n} : Shape{k, n});
    if (gemm) {
        b.n.attrs["transB"] = int64_t(trans_b);
        b.input({n});
    }
    return b.finish(batch ? Shape{batch, m, n} : Shape{m, n});
}

/** A MatMul whose K divides into blocks of 128 (matmul_k_blocked: its base schedule reduces K
 *  in two stages, rfactor, MatmulPlan::k_block). */
Graph k_blocked_matmul(GraphBuilder &b) {
    int64_t m = pick(b.rng, {128, 256}), k = pick(b.rng, {256, 384, 512}),
            n = pick(b.rng, {256, 512});
    b.input({m, k});
    b.input({k, n});
    return b.finish({m, n});
}

/** Rows of the last axis: [R, C], or [B, R, C] (a loop outside the row tiles). */
Graph rows(GraphBuilder &b, const std::string &family) {
    int64_t r = pick(b.rng, {32, 64, 100, 128, 200, 256}), c = pick(b.rng, {16, 32, 48, 64, 100});
    Shape x = b.rng.chance(30) ? Shape{pick(b.rng, {2, 3}), r, c} : Shape{r, c};
    b.input(x);
    if (family == "layernorm") {
        b.input({c});
        b.input({c});
        b.n.attrs["axis"] = int64_t(-1);
        return b.finish(x);
    }
    if (family == "softmax")
        return b.finish(x);
    int64_t last = static_cast<int64_t>(x.size()) - 1;
    if (family == "reduce_sum") // opset 13: the axes are an input
        b.constant_ints({last});
    else
        b.n.attrs["axes"] = std::vector<int64_t>{last};
    x.back() = 1;
    return b.finish(x);
}

Graph broadcast(GraphBuilder &b, const std::string &family) {
    int64_t m = pick(b.rng, {32, 64, 100, 128, 200, 256}), n = pick(b.rng, {16, 64, 100, 256});
    b.input({m, n});
    b.input(family == "add_row" ? Shape{n} : Shape{m, 1});
    return b.finish({m, n});
}

Graph conv(GraphBuilder &b) {
    int64_t ci = pick(b.rng, {1, 3, 8, 16}), co = pick(b.rng, {4, 8, 16, 32}),
            h = pick(b.rng, {6, 8, 12}), w = pick(b.rng, {6, 8, 10}), k = pick(b.rng, {1, 2, 3}),
            pad = b.rng.below(2), stride = 1 + b.rng.below(2);
    int64_t batch = 1 + b.rng.below(2);
    b.input({batch, ci, h, w});
    b.input({co, ci, k, k}, true);
    if (b.rng.chance(50))
        b.input({co}, true);
    b.n.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
    b.n.attrs["strides"] = std::vector<int64_t>{stride, stride};
    auto out = [&](int64_t d) { return (d + 2 * pad - k) / stride + 1; };
    return b.finish({batch, co, out(h), out(w)});
}

Graph pool(GraphBuilder &b, const std::string &family) {
    int64_t c = pick(b.rng, {3, 8, 16, 32}), h = pick(b.rng, {6, 8, 12}),
            w = pick(b.rng, {6, 8, 10}), k = pick(b.rng, {2, 3}), pad = b.rng.below(2),
            stride = 1 + b.rng.below(2);
    if (pad * 2 >= k)
        pad = 0; // ONNX: a pad smaller than the kernel
    int64_t batch = 1 + b.rng.below(2);
    b.input({batch, c, h, w});
    b.n.op_type = family == "maxpool" ? "MaxPool" : "AveragePool";
    b.n.attrs["kernel_shape"] = std::vector<int64_t>{k, k};
    b.n.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
    b.n.attrs["strides"] = std::vector<int64_t>{stride, stride};
    auto out = [&](int64_t d) { return (d + 2 * pad - k) / stride + 1; };
    return b.finish({batch, c, out(h), out(w)});
}

/** Attention over a batch of 2: scores Q K^T, scaled, Softmax over the rows, times V; one group
 *  (the probabilities never leave the chip). */
Graph attention(GraphBuilder &b) {
    int64_t s = pick(b.rng, {32, 64, 100, 128}), d = pick(b.rng, {16, 32, 64});
    b.input({2, s, d});
    b.input({2, d, s});
    b.then("Div", {2, s, s});
    b.divisor({1});
    b.then("Softmax", {2, s, s});
    b.n.attrs["axis"] = int64_t(-1);
    b.then("MatMul", {2, s, s});
    b.input({2, s, d});
    return b.finish({2, s, d});
}

/** Fused groups: a Gemm and its Relu epilogue; Add then Relu; Div by a constant then Softmax. */
Graph chain(GraphBuilder &b, const std::string &family) {
    if (family == "gemm_relu") {
        int64_t m = pick(b.rng, {32, 64, 100, 128}), k = pick(b.rng, {64, 128, 200}),
                n = pick(b.rng, {96, 128, 256, 300});
        b.n.op_type = "Gemm";
        b.input({m, k});
        b.input({k, n}, b.rng.chance(50));
        b.input({n}, true);
        b.then("Relu", {m, n});
        return b.finish({m, n});
    }
    int64_t r = pick(b.rng, {32, 64, 100, 128, 200}), c = pick(b.rng, {16, 48, 64, 100});
    b.input({r, c});
    if (family == "add_relu") {
        b.input(b.rng.chance(50) ? Shape{c} : Shape{r, c});
        b.then("Relu", {r, c});
        return b.finish({r, c});
    }
    b.divisor({1}); // scale_softmax: a Div by a constant, then Softmax over the rows
    b.then("Softmax", {r, c});
    b.n.attrs["axis"] = int64_t(-1);
    return b.finish({r, c});
}

const std::map<std::string, std::string> &op_of_family() {
    static const std::map<std::string, std::string> ops = {
        {"matmul", "MatMul"},          {"gemm", "Gemm"},
        {"softmax", "Softmax"},        {"layernorm", "LayerNormalization"},
        {"reduce_sum", "ReduceSum"},   {"reduce_mean", "ReduceMean"},
        {"reduce_max", "ReduceMax"},   {"add_row", "Add"},
        {"mul_column", "Mul"},         {"conv", "Conv"},
        {"maxpool", "MaxPool"},        {"avgpool", "AveragePool"},
        {"gemm_relu", "Gemm"},         {"add_relu", "Add"},
        {"scale_softmax", "Div"},      {"attention", "MatMul"},
        {"matmul_k_blocked", "MatMul"}};
    return ops;
}

Graph build(const std::string &family, GraphBuilder &b) {
    if (family == "matmul" || family == "gemm")
        return matmul(b, family == "gemm");
    if (family == "softmax" || family == "layernorm" || family.rfind("reduce_", 0) == 0)
        return rows(b, family);
    if (family == "add_row" || family == "mul_column")
        return broadcast(b, family);
    if (family == "conv")
        return conv(b);
    if (family == "gemm_relu" || family == "add_relu" || family == "scale_softmax")
        return chain(b, family);
    if (family == "attention")
        return attention(b);
    if (family == "matmul_k_blocked")
        return k_blocked_matmul(b);
    return pool(b, family);
}

std::string describe(const Graph &g) {
    std::string s;
    for (const Node &n : g.nodes) {
        s += (s.empty() ? "" : " then ") + n.op_type + "(";
        for (size_t i = 0; i < n.inputs.size(); i++)
            s += (i ? ", " : "") + shape_str(g.value(n.inputs[i]).shape);
        s += ") -> " + shape_str(g.value(n.outputs[0]).shape);
    }
    return s;
}

/** The schedule `plan` gives the graph's nodes as one group (the default schedule for a default
 *  plan; matmul_k_blocked's base takes K in blocks), printed as a script. */
std::string default_group_script(const Graph &g, const sched::SchedulePlan &plan) {
    std::vector<const Node *> nodes;
    for (const Node &n : g.nodes)
        nodes.push_back(&n);
    sched::Group grp = sched::build_group(g, nhc::index_values(g), nodes);
    sched::apply_default_schedule(grp, target::target_by_name("trn1"), plan);
    sched::ScheduleScript s;
    s.blocks.push_back(sched::describe_schedule(grp));
    return s.to_string();
}

} // namespace

const std::vector<std::string> &families() {
    static const std::vector<std::string> f = {
        "matmul",     "gemm",     "softmax",       "layernorm", "reduce_sum",      "reduce_mean",
        "reduce_max", "add_row",  "mul_column",    "conv",      "maxpool",         "avgpool",
        "gemm_relu",  "add_relu", "scale_softmax", "attention", "matmul_k_blocked"};
    return f;
}

FuzzCase make_case(const std::string &family, Rng &rng) {
    nhc_assert(op_of_family().count(family), "unknown fuzz family " << family);
    GraphBuilder b(op_of_family().at(family), rng);
    Graph original = build(family, b);
    FuzzCase c;
    c.family = family;
    c.describe = describe(original);
    c.inputs = b.inputs;
    c.want = alg::run_reference(original, c.inputs);
    c.graph = original;
    apply_graph_passes(c.graph, CompileOptions{});
    c.describe += " as ";
    for (const Node &n : c.graph.nodes)
        c.describe += (&n == &c.graph.nodes.front() ? "" : " + ") + n.op_type;
    sched::SchedulePlan plan;
    if (family == "matmul_k_blocked") {
        plan.matmul.operands = sched::MatmulPlan::Operands::KBlocked;
        plan.matmul.k_block = 128;
    }
    c.base_script = default_group_script(c.graph, plan);
    return c;
}

} // namespace nhc::fuzz
