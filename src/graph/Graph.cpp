#include "graph/Graph.h"

#include "support/Error.h"

#include <set>
#include <sstream>

namespace nhc {

int64_t Node::attr_int(const std::string &key, int64_t fallback) const {
    auto it = attrs.find(key);
    if (it == attrs.end())
        return fallback;
    if (const int64_t *v = std::get_if<int64_t>(&it->second))
        return *v;
    user_error("NHC_EONX008", "attribute '", key, "' of ", describe(),
               " should be an integer but has another type");
}

double Node::attr_float(const std::string &key, double fallback) const {
    auto it = attrs.find(key);
    if (it == attrs.end())
        return fallback;
    if (const double *v = std::get_if<double>(&it->second))
        return *v;
    if (const int64_t *v = std::get_if<int64_t>(&it->second))
        return static_cast<double>(*v);
    user_error("NHC_EONX008", "attribute '", key, "' of ", describe(),
               " should be a float but has another type");
}

std::vector<int64_t> Node::attr_ints(const std::string &key) const {
    auto it = attrs.find(key);
    if (it == attrs.end())
        return {};
    if (const auto *v = std::get_if<std::vector<int64_t>>(&it->second))
        return *v;
    user_error("NHC_EONX008", "attribute '", key, "' of ", describe(),
               " should be a list of integers but has another type");
}

std::string Node::attr_string(const std::string &key, const std::string &fallback) const {
    auto it = attrs.find(key);
    if (it == attrs.end())
        return fallback;
    if (const std::string *v = std::get_if<std::string>(&it->second))
        return *v;
    user_error("NHC_EONX008", "attribute '", key, "' of ", describe(),
               " should be a string but has another type");
}

std::vector<int64_t> Node::transpose_perm(int64_t rank) const {
    std::vector<int64_t> perm = attr_ints("perm");
    if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; d--)
            perm.push_back(d);
    for (int64_t &d : perm)
        d = d < 0 ? d + rank : d;
    return perm;
}

std::string Node::describe() const {
    return (domain.empty() ? "" : domain + ".") + op_type + " '" + name + "'";
}

const Value &Graph::value(const std::string &n) const {
    auto it = values.find(n);
    nhc_assert(it != values.end(), "no value named '" << n << "' in graph '" << name << "'");
    return it->second;
}

void Graph::verify() const {
    std::set<std::string> defined;
    for (const std::string &in : inputs) {
        nhc_assert(has_value(in), "graph input '" << in << "' has no value");
        nhc_assert(!value(in).is_constant(), "graph input '" << in << "' is a constant");
        defined.insert(in);
    }
    for (const auto &[n, v] : values) {
        nhc_assert(n == v.name, "value keyed '" << n << "' is named '" << v.name << "'");
        for (int64_t d : v.shape)
            nhc_assert(d >= 0, "value '" << n << "' has a non-static shape " << shape_str(v.shape));
        if (v.is_constant()) {
            nhc_assert(v.constant->shape() == v.shape && v.constant->dtype() == v.dtype,
                       "constant '" << n << "' disagrees with its value type");
            defined.insert(n);
        }
    }
    for (const Node &node : nodes) {
        for (const std::string &in : node.inputs)
            nhc_assert(in.empty() || defined.count(in),
                       node.describe() << " reads '" << in << "' before it is defined");
        for (const std::string &out : node.outputs) {
            nhc_assert(out.empty() || has_value(out),
                       node.describe() << " writes '" << out << "' which has no value");
            defined.insert(out);
        }
    }
    for (const std::string &out : outputs)
        nhc_assert(defined.count(out), "graph output '" << out << "' is never defined");
}

int64_t Graph::constant_bytes() const {
    std::set<std::string> used;
    for (const Node &node : nodes)
        used.insert(node.inputs.begin(), node.inputs.end());
    int64_t total = 0;
    for (const auto &[n, v] : values)
        if (v.is_constant() && used.count(n))
            total += static_cast<int64_t>(v.constant->bytes().size());
    return total;
}

static std::string type_str(const Value &v) {
    return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

namespace {

struct AttrPrinter {
    std::ostream &os;
    void operator()(int64_t v) { os << v; }
    void operator()(double v) { os << v; }
    void operator()(const std::string &v) { os << '"' << v << '"'; }
    void operator()(const HostTensor &t) {
        os << "tensor " << dtype_name(t.dtype()) << shape_str(t.shape());
    }
    template <typename T>
    void operator()(const std::vector<T> &v) {
        os << "[";
        for (size_t i = 0; i < v.size(); i++) {
            if (i)
                os << ",";
            (*this)(v[i]);
        }
        os << "]";
    }
};

} // namespace

static void dump_attr(std::ostream &os, const AttrValue &a) {
    std::visit(AttrPrinter{os}, a);
}

std::string dump_graph(const Graph &g) {
    std::ostringstream os;
    os << "graph " << g.name << " (opset " << g.opset;
    if (g.original_opset != g.opset)
        os << ", converted from " << g.original_opset;
    os << ")\n";
    for (const std::string &in : g.inputs)
        os << "  input  %" << in << " : " << type_str(g.value(in)) << "\n";
    for (const std::string &out : g.outputs)
        os << "  output %" << out << " : " << type_str(g.value(out)) << "\n";
    for (const auto &[n, v] : g.values)
        if (v.is_constant())
            os << "  const  %" << n << " : " << type_str(v) << "\n";
    for (const Node &node : g.nodes) {
        os << "  ";
        for (size_t i = 0; i < node.outputs.size(); i++) {
            os << (i ? ", " : "") << "%" << node.outputs[i];
            if (!node.outputs[i].empty())
                os << ":" << type_str(g.value(node.outputs[i]));
        }
        os << " = " << (node.domain.empty() ? "" : node.domain + ".") << node.op_type;
        if (!node.attrs.empty()) {
            os << "<";
            bool first = true;
            for (const auto &[k, a] : node.attrs) {
                os << (first ? "" : ", ") << k << "=";
                dump_attr(os, a);
                first = false;
            }
            os << ">";
        }
        os << "(";
        for (size_t i = 0; i < node.inputs.size(); i++)
            os << (i ? ", " : "") << (node.inputs[i].empty() ? "" : "%" + node.inputs[i]);
        os << ")  # " << node.name << "\n";
    }
    return os.str();
}

std::string shape_constant(Graph &g, const std::string &name, const Shape &shape) {
    auto t = std::make_shared<HostTensor>(HostTensor::from_i64(shape));
    g.values[name] = Value{name, DType::Int64, t->shape(), t};
    return name;
}

} // namespace nhc
