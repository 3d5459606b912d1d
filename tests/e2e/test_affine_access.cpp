// Affine access recovery (neff/AffineAccess): base and strides of an index in its loops, and the
// same answers when the same index node is asked about again, under the same loops or others.
#include "neff/AffineAccess.h"

#include <doctest/doctest.h>

using namespace nhc::codegen;

namespace {

Halide::Expr var(const char *name) {
    return Halide::Internal::Variable::make(Halide::Int(32), name);
}

} // namespace

TEST_CASE("affine_index: base and strides in the loops given, asked once or again") {
    const Halide::Expr index = var("x") + var("y") * 8 + 3;
    const std::vector<Loop> both = {{"y", 2, 4}, {"x", 0, 8}};
    const std::vector<Loop> x_only = {{"x", 0, 8}};
    for (int pass = 0; pass < 2; pass++) { // the second pass answers from the memo
        CAPTURE(pass);
        std::optional<Affine> a = affine_index(index, both);
        REQUIRE(a);
        CHECK(a->base == 2 * 8 + 3);
        CHECK(a->strides == std::vector<int64_t>{8, 1});
        CHECK(!affine_index(index, x_only)); // y is free: no constant base
        std::optional<Affine> moved = affine_index(index, {{"y", 0, 4}, {"x", 1, 7}});
        REQUIRE(moved);
        CHECK(moved->base == 1 + 3);
    }
    // Not linear: the stride at the minimum does not reach the last point.
    const Halide::Expr square = var("x") * var("x");
    CHECK(!affine_index(square, x_only));
    CHECK(!affine_index(square, x_only));
}
