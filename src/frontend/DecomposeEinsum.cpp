#include "frontend/DecomposeEinsum.h"

#include "frontend/EinsumEquation.h"
#include "frontend/InferShapes.h"
#include "support/Log.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nhc {

namespace {

/** An operand as the rewrite goes: the value that holds it now, a label per dim. */
struct Operand {
    std::string value;
    std::vector<int> labels;
    Shape shape;
};

bool has(const std::vector<int> &labels, int label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

/** The nodes that replace one Einsum, named after it. */
class Emitter {
public:
    explicit Emitter(const onnx::NodeProto &einsum)
        : node_prefix_((einsum.name().empty() ? einsum.output(0) : einsum.name()) + "/"),
          value_prefix_(einsum.output(0) + "/einsum/") {}

    /** x summed over `labels` (which it has), those dims dropped. */
    Operand reduce(const Operand &x, const std::vector<int> &labels, const std::string &tag) {
        if (labels.empty())
            return x;
        Operand r;
        std::vector<int64_t> axes;
        for (size_t d = 0; d < x.labels.size(); d++)
            if (has(labels, x.labels[d]))
                axes.push_back(int64_t(d));
            else {
                r.labels.push_back(x.labels[d]);
                r.shape.push_back(x.shape[d]);
            }
        std::string axes_value = constant(axes, "axes_" + tag);
        onnx::NodeProto n = node("ReduceSum", {x.value, axes_value}, "ReduceSum_" + tag);
        add_int(n, "keepdims", 0);
        r.value = push(std::move(n));
        return r;
    }

    /** x with its dims in the order of `labels` (a permutation of its own). */
    Operand transpose(const Operand &x, const std::vector<int> &labels, const std::string &tag) {
        if (labels == x.labels)
            return x;
        Operand r;
        onnx::NodeProto n = node("Transpose", {x.value}, "Transpose_" + tag);
        onnx::AttributeProto *perm = n.add_attribute();
        perm->set_name("perm");
        perm->set_type(onnx::AttributeProto::INTS);
        for (int label : labels) {
            size_t d =
                size_t(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
            perm->add_ints(int64_t(d));
            r.shape.push_back(x.shape[d]);
        }
        r.labels = labels;
        r.value = push(std::move(n));
        return r;
    }

    /** `value` of `shape` reshaped to `to`. */
    std::string reshape(const std::string &value, const Shape &shape, const Shape &to,
                        const std::string &tag) {
        if (shape == to)
            return value;
        std::string shape_value = constant(to, "shape_" + tag);
        return push(node("Reshape", {value, shape_value}, "Reshape_" + tag));
    }

    std::string matmul(const std::string &a, const std::string &b, const std::string &tag) {
        return push(node("MatMul", {a, b}, "MatMul" + tag));
    }

    /** The nodes, the last one writing `output` (an Identity when there is nothing to do). */
    std::vector<onnx::NodeProto> finish(const std::string &last, const std::string &output) {
        if (nodes_.empty() || nodes_.back().output(0) != last)
            push(node("Identity", {last}, "Identity"));
        nodes_.back().set_output(0, output);
        return std::move(nodes_);
    }

private:
    onnx::NodeProto node(const std::string &op, const std::vector<std::string> &inputs,
                         const std::string &tag) const {
        onnx::NodeProto n;
        n.set_op_type(op);
        n.set_name(node_prefix_ + tag);
        for (const std::string &in : inputs)
            n.add_input(in);
        n.add_output(value_prefix_ + tag);
        return n;
    }

    static void add_int(onnx::NodeProto &n, const char *name, int64_t v) {
        onnx::AttributeProto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }

    std::string constant(const std::vector<int64_t> &values, const std::string &tag) {
        onnx::NodeProto n = node("Constant", {}, tag);
        onnx::AttributeProto *a = n.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto *t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(int64_t(values.size()));
        for (int64_t v : values)
            t->add_int64_data(v);
        return push(std::move(n));
    }

    std::string push(onnx::NodeProto n) {
        nodes_.push_back(std::move(n));
        return nodes_.back().output(0);
    }

    std::string node_prefix_, value_prefix_;
    std::vector<onnx::NodeProto> nodes_;
};

/** The operands of `n` when its Einsum is one this pass takes (see the header), else nothing. */
std::optional<std::vector<Operand>> operands_of(const onnx::NodeProto &n,
                                                const std::map<std::string, ValueType> &types,
                                                std::vector<int> &output_labels) {
    if (n.input_size() < 1)
        return std::nullopt;
    std::vector<Shape> shapes;
    for (const std::string &in : n.input()) {
        auto it = types.find(in);
        if (it == types.end() || !it->second.is_static() ||
            (it->second.elem_type != onnx::TensorProto::FLOAT &&
             it->second.elem_type != onnx::TensorProto::FLOAT16))
            return std::nullopt;
        shapes.push_back(it->second.shape);
    }
    std::optional<EinsumEquation> eq = einsum_of(n, shapes);
    if (!eq)
        return std::nullopt; // the host evaluator says what is wrong
    std::vector<Operand> ops;
    for (size_t i = 0; i < shapes.size(); i++) {
        std::vector<int> sorted = eq->operands[i];
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            return std::nullopt; // a diagonal
        ops.push_back({n.input(int(i)), eq->operands[i], shapes[i]});
    }
    output_labels = eq->output;
    return ops;
}

int64_t extent_of(const Operand &x, int label) {
    return x.shape[size_t(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin())];
}

/** The extent of `label` in a product of a and b: the larger where an ellipsis dim of 1 in one
 *  broadcasts against the other, 1 in one that lacks it. */
int64_t joint_extent(const Operand &a, const Operand &b, int label) {
    return std::max(has(a.labels, label) ? extent_of(a, label) : 1,
                    has(b.labels, label) ? extent_of(b, label) : 1);
}

/** A's and B's labels by role: in both and the output (batch), in A alone and the output (m),
 *  in B alone and the output (n), in both and not the output (k, summed by the MatMul). Nothing
 *  when a k label broadcasts (extent 1 in one, more in the other). */
struct Roles {
    std::vector<int> batch, m, n, k;
};

std::optional<Roles> roles_of(const Operand &a, const Operand &b, const std::vector<int> &out) {
    Roles r;
    for (int label : out) {
        if (has(a.labels, label) && has(b.labels, label))
            r.batch.push_back(label);
        else
            (has(a.labels, label) ? r.m : r.n).push_back(label);
    }
    for (int label : a.labels)
        if (!has(out, label)) {
            if (extent_of(a, label) != extent_of(b, label))
                return std::nullopt;
            r.k.push_back(label);
        }
    return r;
}

std::vector<int> concat(std::vector<int> a, const std::vector<int> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/** [batch extents of x..., product over `rows`, product over `cols`]. */
Shape as_matrices(const Operand &x, const std::vector<int> &batch, const std::vector<int> &rows,
                  const std::vector<int> &cols) {
    Shape s, r, c;
    for (int label : batch)
        s.push_back(extent_of(x, label));
    for (int label : rows)
        r.push_back(extent_of(x, label));
    for (int label : cols)
        c.push_back(extent_of(x, label));
    s.push_back(shape_numel(r));
    s.push_back(shape_numel(c));
    return s;
}

/** The labels of `x` that `keep` lacks and no operand of `others` has: summed before a
 *  product, since only `x` has them. */
std::vector<int> own_labels(const Operand &x, const std::vector<int> &keep,
                            const std::vector<Operand> &others) {
    std::vector<int> own;
    for (int label : x.labels) {
        bool elsewhere = has(keep, label);
        for (const Operand &o : others)
            elsewhere = elsewhere || has(o.labels, label);
        if (!elsewhere)
            own.push_back(label);
    }
    return own;
}

/** a times b summed over the labels both have and `out` lacks, as one MatMul: the result's
 *  labels are `out`'s in the order batch, m, n (roles_of). `step` tells the nodes of one
 *  product from another's ("" for the first). Nothing when a summed label broadcasts. */
std::optional<Operand> contract(Emitter &e, const Operand &a, const Operand &b,
                                const std::vector<int> &out, const std::string &step) {
    std::optional<Roles> r = roles_of(a, b, out);
    if (!r)
        return std::nullopt;
    Operand at = e.transpose(a, concat(concat(r->batch, r->m), r->k), "A" + step);
    Operand bt = e.transpose(b, concat(concat(r->batch, r->k), r->n), "B" + step);
    std::string am =
        e.reshape(at.value, at.shape, as_matrices(at, r->batch, r->m, r->k), "A" + step);
    std::string bm =
        e.reshape(bt.value, bt.shape, as_matrices(bt, r->batch, r->k, r->n), "B" + step);
    // The product [batch..., M, N] (batch dims broadcast), then its dims by label.
    Shape batch_extents, m_extents, n_extents;
    for (int label : r->batch)
        batch_extents.push_back(joint_extent(a, b, label));
    for (int label : r->m)
        m_extents.push_back(extent_of(a, label));
    for (int label : r->n)
        n_extents.push_back(extent_of(b, label));
    Shape product_shape = batch_extents;
    product_shape.push_back(shape_numel(m_extents));
    product_shape.push_back(shape_numel(n_extents));
    Operand p;
    p.shape = batch_extents;
    p.shape.insert(p.shape.end(), m_extents.begin(), m_extents.end());
    p.shape.insert(p.shape.end(), n_extents.begin(), n_extents.end());
    p.labels = concat(concat(r->batch, r->m), r->n);
    p.value = e.reshape(e.matmul(am, bm, step), product_shape, p.shape, "out" + step);
    return p;
}

/** The multiply-adds of a times b: the product of the joint extents of the labels either has. */
double product_work(const Operand &a, const Operand &b) {
    double work = 1;
    for (int label : a.labels)
        work *= double(joint_extent(a, b, label));
    for (int label : b.labels)
        if (!has(a.labels, label))
            work *= double(extent_of(b, label));
    return work;
}

/** The labels the product of operands `first` and `second` of `terms` keeps: the output's and
 *  those another operand has, the output's first. */
std::vector<int> kept_labels(const std::vector<Operand> &terms, size_t first, size_t second,
                             const std::vector<int> &out) {
    std::vector<int> keep = out;
    for (size_t o = 0; o < terms.size(); o++)
        if (o != first && o != second)
            for (int label : concat(terms[first].labels, terms[second].labels))
                if (has(terms[o].labels, label) && !has(keep, label))
                    keep.push_back(label);
    return keep;
}

/** `terms` with operands `first` and `second` replaced by their product's labels and extents
 *  (no value: for counting work), in the place of `first`. */
std::vector<Operand> multiplied(std::vector<Operand> terms, size_t first, size_t second,
                                const std::vector<int> &out) {
    Operand p;
    for (int label : kept_labels(terms, first, second, out))
        if (has(terms[first].labels, label) || has(terms[second].labels, label)) {
            p.labels.push_back(label);
            p.shape.push_back(joint_extent(terms[first], terms[second], label));
        }
    terms[first] = p;
    terms.erase(terms.begin() + long(second));
    return terms;
}

/** The pairs to multiply, in order, that take `terms` to one with the fewest multiply-adds
 *  (every order tried, up to kMaxOrderedTerms operands; beyond, left to right); ties go to the
 *  first pair in (first, second) order, so the choice is deterministic. */
constexpr size_t kMaxOrderedTerms = 6;
std::vector<std::pair<size_t, size_t>> cheapest_order(const std::vector<Operand> &terms,
                                                      const std::vector<int> &out,
                                                      double *work = nullptr) {
    if (terms.size() > kMaxOrderedTerms)
        return std::vector<std::pair<size_t, size_t>>(terms.size() - 1, {0, 1});
    std::vector<std::pair<size_t, size_t>> best;
    double best_work = -1;
    for (size_t i = 0; i < terms.size(); i++)
        for (size_t j = i + 1; j < terms.size(); j++) {
            double rest = 0;
            std::vector<std::pair<size_t, size_t>> order =
                terms.size() > 2 ? cheapest_order(multiplied(terms, i, j, out), out, &rest)
                                 : std::vector<std::pair<size_t, size_t>>{};
            double w = product_work(terms[i], terms[j]) + rest;
            if (best_work < 0 || w < best_work) {
                best_work = w;
                best = {{i, j}};
                best.insert(best.end(), order.begin(), order.end());
            }
        }
    if (work)
        *work = best_work;
    return best;
}

std::optional<std::vector<onnx::NodeProto>>
decompose(const onnx::NodeProto &n, const std::map<std::string, ValueType> &types) {
    std::vector<int> out;
    std::optional<std::vector<Operand>> ops = operands_of(n, types, out);
    if (!ops)
        return std::nullopt;
    Emitter e(n);
    if (ops->size() == 1) {
        Operand x = e.reduce(ops->front(), own_labels(ops->front(), out, {}), "A");
        return e.finish(e.transpose(x, out, "A").value, n.output(0));
    }
    // One product of two operands at a time, in the order with the fewest multiply-adds: a
    // low-rank layer `ir,ro,bsi->bso` multiplies x by U, then by V (100 M), where left to right
    // it would build U V first (642 M). The product takes the first operand's place and keeps
    // the labels the output or another operand has; labels only one operand of a product has,
    // and nothing else needs, are summed before it.
    std::vector<Operand> left = *ops;
    int step = 1;
    for (auto [first, second] : cheapest_order(left, out)) {
        std::vector<int> keep = kept_labels(left, first, second, out);
        std::vector<Operand> a_others, b_others;
        for (size_t i = 0; i < left.size(); i++) {
            if (i != first)
                a_others.push_back(left[i]);
            if (i != second)
                b_others.push_back(left[i]);
        }
        std::string tag = step == 1 ? "" : "_" + std::to_string(step);
        step++;
        Operand a = e.reduce(left[first], own_labels(left[first], keep, a_others), "A" + tag);
        Operand b = e.reduce(left[second], own_labels(left[second], keep, b_others), "B" + tag);
        // The product's labels: those of `keep` that a or b has.
        std::vector<int> product;
        for (int label : keep)
            if (has(a.labels, label) || has(b.labels, label))
                product.push_back(label);
        std::optional<Operand> p = contract(e, a, b, product, tag);
        if (!p)
            return std::nullopt;
        left[first] = *p;
        left.erase(left.begin() + long(second));
    }
    const Operand &acc = left.front();
    return e.finish(e.transpose(acc, out, "out").value, n.output(0));
}

} // namespace

int decompose_einsums(onnx::ModelProto &model) {
    onnx::GraphProto &g = *model.mutable_graph();
    const std::map<std::string, ValueType> types = collect_value_types(g);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    int rewritten = 0;
    for (onnx::NodeProto &n : *g.mutable_node()) {
        std::optional<std::vector<onnx::NodeProto>> parts;
        if (n.op_type() == "Einsum" && (n.domain().empty() || n.domain() == "ai.onnx"))
            parts = decompose(n, types);
        if (!parts) {
            nodes.Add()->Swap(&n);
            continue;
        }
        int64_t products = std::count_if(parts->begin(), parts->end(),
                                         [](const auto &p) { return p.op_type() == "MatMul"; });
        log_debug("Einsum '", n.name().empty() ? n.output(0) : n.name(), "' as ", parts->size(),
                  " nodes around ", products, " MatMul(s)");
        for (onnx::NodeProto &p : *parts)
            nodes.Add()->Swap(&p);
        rewritten++;
    }
    g.mutable_node()->Swap(&nodes);
    return rewritten;
}

} // namespace nhc
