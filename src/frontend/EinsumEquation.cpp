#include "frontend/EinsumEquation.h"

#include <algorithm>
#include <cctype>

namespace nhc {

namespace {

std::vector<std::string> split_terms(const std::string &s) {
    std::vector<std::string> terms(1);
    for (char ch : s)
        if (ch == ',')
            terms.emplace_back();
        else if (ch != ' ')
            terms.back() += ch;
    return terms;
}

using Fail = std::function<void(const std::string &)>;

/** Each operand's labels; returns the rank the ellipsis covers (the largest over operands). */
int read_operands(const std::string &text, const std::vector<std::string> &terms,
                  const std::vector<Shape> &shapes, const Fail &fail, EinsumEquation &eq,
                  std::map<int, int> &uses) {
    int ellipsis_rank = 0;
    for (size_t i = 0; i < terms.size(); i++) {
        const std::string &t = terms[i];
        const size_t dots = t.find("...");
        const int letters = int(t.size()) - (dots == std::string::npos ? 0 : 3);
        const int covered = int(shapes[i].size()) - letters;
        if (covered < 0 || (dots == std::string::npos && covered != 0))
            fail("operand '" + t + "' of equation '" + text + "' does not suit rank " +
                 std::to_string(shapes[i].size()));
        std::vector<int> labels;
        for (size_t k = 0; k < t.size(); k++) {
            if (k == dots) {
                for (int e = 0; e < covered; e++)
                    labels.push_back(-covered + e);
                k += 2;
            } else if (std::isalpha(static_cast<unsigned char>(t[k]))) {
                labels.push_back(kEinsumFirstLetter + t[k]);
                uses[kEinsumFirstLetter + t[k]]++;
            } else {
                fail("equation '" + text + "' has the character '" + t.substr(k, 1) + "'");
            }
        }
        ellipsis_rank = std::max(ellipsis_rank, covered);
        eq.operands.push_back(std::move(labels));
    }
    return ellipsis_rank;
}

void read_output(const std::string &text, size_t arrow, int ellipsis_rank,
                 const std::map<int, int> &uses, const Fail &fail, EinsumEquation &eq) {
    if (arrow == std::string::npos) { // implicit
        for (int e = 0; e < ellipsis_rank; e++)
            eq.output.push_back(-ellipsis_rank + e);
        for (const auto &[label, n] : uses)
            if (n == 1)
                eq.output.push_back(label);
        return;
    }
    const std::string out = split_terms(text.substr(arrow + 2)).front();
    for (size_t k = 0; k < out.size(); k++) {
        if (out.compare(k, 3, "...") == 0) {
            for (int e = 0; e < ellipsis_rank; e++)
                eq.output.push_back(-ellipsis_rank + e);
            k += 2;
        } else if (!uses.count(kEinsumFirstLetter + out[k])) {
            fail("output label '" + out.substr(k, 1) + "' of equation '" + text +
                 "' is in no operand");
        } else {
            eq.output.push_back(kEinsumFirstLetter + out[k]);
        }
    }
}

void read_extents(const std::string &text, const std::vector<Shape> &shapes, const Fail &fail,
                  EinsumEquation &eq) {
    for (size_t i = 0; i < shapes.size(); i++)
        for (size_t d = 0; d < shapes[i].size(); d++) {
            const int label = eq.operands[i][d];
            auto [it, added] = eq.extent.emplace(label, shapes[i][d]);
            if (added || it->second == shapes[i][d])
                continue;
            if (label < 0 && (it->second == 1 || shapes[i][d] == 1))
                it->second = std::max(it->second, shapes[i][d]);
            else
                fail("label dims of extents " + std::to_string(it->second) + " and " +
                     std::to_string(shapes[i][d]) + " differ in '" + text + "'");
        }
}

} // namespace

EinsumEquation parse_einsum(const std::string &text, const std::vector<Shape> &shapes,
                            const std::function<void(const std::string &)> &fail) {
    const size_t arrow = text.find("->");
    const std::vector<std::string> terms = split_terms(text.substr(0, arrow));
    if (terms.size() != shapes.size())
        fail("equation '" + text + "' names " + std::to_string(terms.size()) + " operands for " +
             std::to_string(shapes.size()) + " inputs");
    EinsumEquation eq;
    std::map<int, int> uses;
    const int ellipsis_rank = read_operands(text, terms, shapes, fail, eq, uses);
    read_output(text, arrow, ellipsis_rank, uses, fail, eq);
    read_extents(text, shapes, fail, eq);
    return eq;
}

std::optional<EinsumEquation> einsum_of(const onnx::NodeProto &n,
                                        const std::vector<Shape> &shapes) {
    const onnx::AttributeProto *equation = nullptr;
    for (const auto &a : n.attribute())
        if (a.name() == "equation")
            equation = &a;
    if (!equation || n.output_size() != 1)
        return std::nullopt;
    struct Unsuited {};
    try {
        return parse_einsum(equation->s(), shapes, [](const std::string &) { throw Unsuited{}; });
    } catch (const Unsuited &) {
        return std::nullopt;
    }
}

Shape einsum_output_shape(const EinsumEquation &eq) {
    Shape shape;
    for (int label : eq.output)
        shape.push_back(eq.extent.at(label));
    return shape;
}

} // namespace nhc
