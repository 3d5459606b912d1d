#include "algorithms/Broadcast.h"

#include "algorithms/Families.h"

namespace nhc::alg {

Shape broadcast_shape(const Node &node, const std::vector<Shape> &shapes) {
    std::optional<Shape> out = numpy_broadcast(shapes);
    if (!out)
        unsupported_form(node, "operand shapes " + shapes_str(shapes) + " do not broadcast");
    return *out;
}

std::vector<Halide::Expr> broadcast_index(const Shape &in, const Shape &out,
                                          const std::vector<Halide::Expr> &out_index) {
    std::vector<Halide::Expr> idx;
    size_t off = out.size() - in.size();
    for (size_t i = 0; i < in.size(); i++)
        idx.push_back(in[i] == 1 && out[off + i] != 1 ? Halide::Expr(0) : out_index[off + i]);
    return idx;
}

std::vector<Halide::Expr> onnx_index(const std::vector<Halide::Var> &halide_vars) {
    return std::vector<Halide::Expr>(halide_vars.rbegin(), halide_vars.rend());
}

Tensor broadcast_to(Builder &b, const Tensor &t, const Shape &out, const std::string &role) {
    if (t.shape == out)
        return t;
    std::vector<Halide::Var> v = Builder::vars(static_cast<int>(out.size()));
    Halide::Func f = b.func(role, out);
    Halide::Expr e = t.at(broadcast_index(t.shape, out, onnx_index(v)));
    define(f, v, e);
    b.broadcasts(f, t.shape);
    return Tensor{f, out, t.dtype};
}

} // namespace nhc::alg
