#ifndef NHC_TESTS_E2E_H
#define NHC_TESTS_E2E_H

// Compile a Graph to a program in-process and run it on the simulator: the end-to-end path of
// neuron-halide-cc + neuron-halide-run without files in between.

#include "../algorithms/CaseData.h"
#include "driver/Codegen.h"
#include "runtime/Runtime.h"
#include "support/Error.h"

#include <cstring>

namespace nhc::test {

inline rt::Tensor to_rt(const HostTensor &t, neff::DType dt) {
    rt::Tensor r;
    r.dtype = dt;
    r.shape = t.shape();
    if (t.dtype() == DType::Int64 && dt == neff::DType::I32) { // the compiler's int64 downcast
        HostTensor n(DType::Int32, t.shape());
        for (int64_t i = 0; i < t.numel(); i++)
            n.set_i64(i, t.get_i64(i));
        r.data = n.bytes().to_vector();
        return r;
    }
    r.data = t.bytes().to_vector();
    return r;
}

inline HostTensor from_rt(const rt::Tensor &t, DType dt) {
    if (dt == DType::Int64)
        dt = DType::Int32; // the compiler's int64 downcast
    HostTensor h(dt, t.shape);
    nhc_assert(h.bytes().size() == t.data.size(), "output size mismatch");
    std::memcpy(h.mutable_bytes().data(), t.data.data(), t.data.size());
    return h;
}

struct E2EResult {
    std::map<std::string, HostTensor> outputs;
    rt::Summary summary;
};

/** Runs a compiled program on the simulator with `inputs` (keyed by graph input name); the
 *  outputs are converted to the graph's dtypes. */
inline E2EResult run_program(neff::Program p, const Graph &g,
                             const std::map<std::string, HostTensor> &inputs) {
    std::map<std::string, rt::Tensor> in;
    for (const auto &[name, t] : inputs) {
        int v = p.var_index(name);
        nhc_assert(v >= 0, "no variable for input " << name);
        in[name] = to_rt(t, p.vars[v].dtype);
    }
    std::unique_ptr<rt::Model> m = rt::Model::load_program(std::move(p));
    rt::ExecOptions o;
    o.check_races = true; // every compiled program must be race-free (issue 14)
    rt::ExecResult r = m->execute(in, o);
    E2EResult out;
    out.summary = r.summary;
    for (const std::string &o2 : g.outputs)
        out.outputs[o2] = from_rt(r.outputs.at(o2), g.value(o2).dtype);
    return out;
}

inline E2EResult compile_and_run(Graph g, const std::map<std::string, HostTensor> &inputs,
                                 const CompileOptions &o = {}) {
    apply_graph_passes(g, o);
    return run_program(generate_program(g, o), g, inputs);
}

} // namespace nhc::test

#endif
