#ifndef NHC_TESTS_BACKEND_VECTORKERNEL_H
#define NHC_TESTS_BACKEND_VECTORKERNEL_H

// A harness for one-engine kernels: inputs x and x2 (f32 [P, F]) are DMAed to SBUF offsets 0 and
// 32768, the given instruction lines run on `engine`, and output y is DMAed back from SBUF offset
// 65536 as dtype `out` with `out_f` elements per partition.

#include "BackendTest.h"

#include <algorithm>
#include <cmath>

namespace nhc::test {

inline std::vector<float> run_vector(const std::string &engine, const std::string &lines, int P,
                                     int F, const std::vector<float> &x,
                                     const std::vector<float> &x2, const char *out, int out_f,
                                     const std::string &target = "trn1") {
    neff::DType odt;
    REQUIRE(neff::parse_dtype(out, odt));
    int oes = neff::dtype_size(odt);
    std::string s = ".target " + target + "\n.var x input f32 [" + std::to_string(P) + "," +
                    std::to_string(F) + "]\n.var x2 input f32 [" + std::to_string(P) + "," +
                    std::to_string(F) + "]\n.var y output " + out + " [" + std::to_string(P) + "," +
                    std::to_string(out_f) + "]\n.engine sp\n";
    s += "  dma queue=0 dst=" + sb("f32", 0, P, 0, F) + " src=" + hbm2d("f32", "x", P, F, 4) +
         " signal=s0\n";
    s += "  dma queue=1 dst=" + sb("f32", 0, P, 32768, F) + " src=" + hbm2d("f32", "x2", P, F, 4) +
         " signal=s0\n";
    s += "  dma queue=2 dst=" + hbm2d(out, "y", P, out_f, oes) +
         " src=" + sb(out, 0, P, 65536, out_f) + " wait=s1>=1\n";
    s += ".engine " + engine + "\n  nop wait=s0>=2\n" + lines + "  nop signal=s1\n";
    auto r = run_text(s, {{"x", make_tensor(neff::DType::F32, {P, F}, x)},
                          {"x2", make_tensor(neff::DType::F32, {P, F}, x2)}});
    return values(r.outputs.at("y"));
}

} // namespace nhc::test

#endif
