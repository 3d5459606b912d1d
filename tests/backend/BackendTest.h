#ifndef NHC_TESTS_BACKEND_BACKENDTEST_H
#define NHC_TESTS_BACKEND_BACKENDTEST_H

// Helpers shared by the back-end tests: programs from assembly text, tensors from floats,
// running on the simulator, and checking error codes.

#include "neff/Assembler.h"
#include "neff/NeffFile.h"
#include "runtime/Numerics.h"
#include "runtime/Runtime.h"
#include "support/Error.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace nhc::test {

/** Checks that `expr` throws a UserError with this code. */
#define CHECK_CODE(expr, expected_code)                                                            \
    do {                                                                                           \
        std::string got_code_ = "<no error>";                                                      \
        try {                                                                                      \
            (void)(expr);                                                                          \
        } catch (const nhc::UserError &e_) {                                                       \
            got_code_ = e_.code();                                                                 \
            MESSAGE(std::string(e_.what()));                                                       \
        }                                                                                          \
        CHECK(got_code_ == std::string(expected_code));                                            \
    } while (0)

/** A program that computes y = x + 1 on [128, 16] (one DVE instruction between two DMAs). */
inline const char *kAddOne = R"(.target trn1
.name add_one
.var x input f32 [128,16]
.var y output f32 [128,16]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,16]] src=hbm.f32[x,0][[64,128],[4,16]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[64,128],[4,16]] src=sbuf.f32[0:128,64][[1,16]] wait=s1>=1
.engine dve
  tensor_scalar dst=sbuf.f32[0:128,64][[1,16]] src=sbuf.f32[0:128,0][[1,16]] op0=add s0=1 wait=s0>=1 signal=s1 name="node/Add"
)";

/** Deterministic pseudo-random floats in [lo, hi). */
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
    std::vector<float> v(n);
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (auto &x : v) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x = lo + (hi - lo) * float((s >> 40) & 0xffffff) / float(1 << 24);
    }
    return v;
}

inline rt::Tensor make_tensor(neff::DType t, std::vector<int64_t> shape,
                              const std::vector<float> &values) {
    rt::Tensor out{t, std::move(shape), {}};
    out.data.resize(values.size() * size_t(neff::dtype_size(t)));
    for (size_t i = 0; i < values.size(); i++) {
        rt::store_elem(t, out.data.data() + i * size_t(neff::dtype_size(t)), values[i]);
    }
    return out;
}

/** A tensor of zeros, for programs whose timing, not values, is under test. */
inline rt::Tensor zeros(neff::DType t, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
        n *= d;
    }
    return make_tensor(t, std::move(shape), std::vector<float>(size_t(n)));
}

inline std::vector<float> values(const rt::Tensor &t) {
    size_t es = size_t(neff::dtype_size(t.dtype));
    std::vector<float> v(t.data.size() / es);
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = rt::load_elem(t.dtype, t.data.data() + i * es);
    }
    return v;
}

/** Values after a round trip through dtype t (what the device holds). */
inline std::vector<float> rounded(neff::DType t, std::vector<float> v) {
    for (auto &x : v) {
        x = rt::round_through(t, x);
    }
    return v;
}

inline std::vector<uint8_t> bytes_of(neff::DType t, const std::vector<float> &v) {
    return make_tensor(t, {int64_t(v.size())}, v).data;
}

inline rt::ExecResult run_program(neff::Program p, const std::map<std::string, rt::Tensor> &in,
                                  bool trace = false) {
    auto m = rt::Model::load_program(std::move(p));
    rt::ExecOptions o;
    o.trace = trace;
    o.check_races = true; // every program a test runs must be race-free (issue 14)
    return m->execute(in, o);
}

inline rt::ExecResult run_text(const std::string &text, const std::map<std::string, rt::Tensor> &in,
                               bool trace = false) {
    return run_program(neff::parse_program(text), in, trace);
}

/** "sbuf.f32[0:128,0][[1,512]]" and friends. */
inline std::string sb(const char *dt, int p0, int np, int64_t off, int64_t n,
                      const char *space = "sbuf") {
    return std::string(space) + "." + dt + "[" + std::to_string(p0) + ":" + std::to_string(np) +
           "," + std::to_string(off) + "][[1," + std::to_string(n) + "]]";
}

/** A row-major [rows, cols] HBM view of variable `var` with element size `es`. */
inline std::string hbm2d(const char *dt, const char *var, int64_t rows, int64_t cols, int es,
                         int64_t row_off = 0, int64_t col_off = 0, int64_t ld = -1) {
    if (ld < 0) {
        ld = cols;
    }
    return std::string("hbm.") + dt + "[" + var + "," +
           std::to_string((row_off * ld + col_off) * es) + "][[" + std::to_string(ld * es) + "," +
           std::to_string(rows) + "],[" + std::to_string(es) + "," + std::to_string(cols) + "]]";
}

} // namespace nhc::test

#endif
