#include "autoscheduler/Workload.h"

#include <cstdio>
#include <set>
#include <sstream>

namespace nhc::autosched {

namespace {

// Constants up to this many elements are attribute-like (Reshape's shape, a scalar exponent):
// their values are part of the workload. Larger ones are weights, known by type and shape.
constexpr int64_t kAttributeLikeElements = 16;

uint64_t fnv1a(const std::string &s) {
    uint64_t h = 1469598103934665603ull; // FNV-1a 64 offset basis and prime (public domain)
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

template <typename T>
void write_list(std::ostream &os, const std::vector<T> &v) {
    os << "[";
    for (size_t i = 0; i < v.size(); i++)
        os << (i ? "," : "") << v[i];
    os << "]";
}

void write_bytes(std::ostream &os, ByteView bytes) {
    os << "#" << bytes.size() << ":" << fnv1a(std::string(bytes.begin(), bytes.end()));
}

// A float attribute's value is an immediate of the instructions (a scale, an epsilon, a slope:
// what fp8's per-tensor weight scales make differ in every layer); the schedule depends only on
// whether it is 0 or +-1, which an algorithm may drop or fold. Other values are written as `f`
// and their exact values to `literals`, which the lowering's key adds.
void write_attr(std::ostream &os, std::ostream &literals, const AttrValue &a) {
    if (auto *i = std::get_if<int64_t>(&a))
        os << *i;
    else if (auto *d = std::get_if<double>(&a)) {
        if (*d == 0.0 || *d == 1.0 || *d == -1.0)
            os << *d;
        else
            os << "f";
        literals << *d << " ";
    } else if (auto *s = std::get_if<std::string>(&a))
        os << '"' << *s << '"';
    else if (auto *is = std::get_if<std::vector<int64_t>>(&a))
        write_list(os, *is);
    else if (auto *ds = std::get_if<std::vector<double>>(&a))
        write_list(os, *ds);
    else if (auto *ss = std::get_if<std::vector<std::string>>(&a))
        write_list(os, *ss);
    else if (auto *t = std::get_if<HostTensor>(&a)) {
        os << dtype_name(t->dtype());
        write_list(os, t->shape());
        write_bytes(os, t->bytes());
    }
}

void write_value(std::ostream &os, const Value &v) {
    os << dtype_name(v.dtype);
    write_list(os, v.shape);
    if (v.is_constant()) {
        os << " const";
        if (v.constant->numel() <= kAttributeLikeElements)
            write_bytes(os, v.constant->bytes());
    }
}

} // namespace

Workload workload_of(const Graph &g, const sched::Group &group,
                     const std::map<std::string, std::vector<int64_t>> &output_perm,
                     const std::string &target) {
    const std::vector<const Node *> &nodes = group.nodes;
    std::set<std::string> leaving;
    for (const sched::GroupOutput &o : group.outputs)
        leaving.insert(o.value);
    std::ostringstream os, literals;
    os.precision(17);
    literals.precision(17);
    os << "target " << target << "\n";
    std::map<std::string, std::string> produced; // value -> "n<i>.<j>"
    std::map<std::string, int> group_inputs;     // value -> its index among the group's inputs
    for (size_t i = 0; i < nodes.size(); i++) {
        const Node &n = *nodes[i];
        os << "n" << i << " " << n.domain << (n.domain.empty() ? "" : ".") << n.op_type;
        for (const auto &[key, a] : n.attrs) {
            os << " " << key << "=";
            write_attr(os, literals, a);
        }
        if (n.operand_cast)
            os << " cast=" << dtype_name(*n.operand_cast);
        if (n.keep_precision)
            os << " keep_precision";
        for (const auto &[input, perm] : n.input_perm) {
            os << " perm" << input << "=";
            write_list(os, perm);
        }
        os << "\n";
        for (const std::string &in : n.inputs) {
            os << "  in ";
            if (in.empty())
                os << "none";
            else if (auto p = produced.find(in); p != produced.end())
                os << p->second;
            else {
                auto [it, fresh] = group_inputs.emplace(in, static_cast<int>(group_inputs.size()));
                os << "g" << it->second << " ";
                write_value(os, g.value(in));
            }
            os << "\n";
        }
        for (size_t j = 0; j < n.outputs.size(); j++) {
            produced[n.outputs[j]] = "n" + std::to_string(i) + "." + std::to_string(j);
            os << "  out ";
            write_value(os, g.value(n.outputs[j]));
            if (leaving.count(n.outputs[j]))
                os << " leaves";
            if (auto p = output_perm.find(n.outputs[j]); p != output_perm.end()) {
                os << " stored_as ";
                write_list(os, p->second);
            }
            os << "\n";
        }
    }
    Workload w;
    w.text = os.str();
    w.literals = literals.str();
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(w.text)));
    w.hash = hex;
    return w;
}

} // namespace nhc::autosched
