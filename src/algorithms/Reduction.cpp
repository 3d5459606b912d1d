#include "algorithms/Reduction.h"

namespace nhc::alg {

ReductionAxes make_reduction(const Shape &shape, const std::set<int> &axes,
                             const std::string &name) {
    ReductionAxes r;
    std::vector<Halide::Range> ranges;
    // RDom dims are innermost first: list the reduced axes from the last ONNX axis.
    for (int a = static_cast<int>(shape.size()) - 1; a >= 0; a--)
        if (axes.count(a)) {
            ranges.emplace_back(0, static_cast<int>(shape[a]));
            r.count *= shape[a];
        }
    for (int a = 0; a < static_cast<int>(shape.size()); a++)
        (axes.count(a) ? r.reduced : r.kept).push_back(a);
    r.rdom = Halide::RDom(ranges, name);
    return r;
}

std::vector<Halide::Expr> full_index(const ReductionAxes &r, int rank,
                                     const std::vector<Halide::Expr> &kept_index) {
    std::vector<Halide::Expr> idx(rank);
    for (size_t i = 0; i < r.kept.size(); i++)
        idx[r.kept[i]] = kept_index[i];
    int n = static_cast<int>(r.reduced.size());
    for (int i = 0; i < n; i++) // reduced[n-1] (last ONNX axis) is RDom dim 0
        idx[r.reduced[i]] = r.rdom[n - 1 - i];
    return idx;
}

std::vector<Halide::Expr> kept_part(const ReductionAxes &r, const std::vector<Halide::Expr> &full) {
    std::vector<Halide::Expr> k;
    for (int a : r.kept)
        k.push_back(full[a]);
    return k;
}

} // namespace nhc::alg
