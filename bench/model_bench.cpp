// Compiles ONNX models with the default schedules and simulates them on a target in timing-only
// mode, printing what issue 5 asks to report: simulated latency, the roofline bound (the larger of
// the model's matmul FLOPs over the PE peak for the operand dtype and the bytes that must cross
// HBM, weights at their stored dtype plus inputs and outputs, over the HBM bandwidth; of a table
// that only an embedding lookup reads, the rows its indices name), MFU (the
// model's FLOPs over the PE peak, over the latency), per-engine utilisation, DMA bytes, and the
// host time to compile and to simulate. A benchmark, not a test.
//
// usage: model_bench [--target trn1] [-O1|-O2|-O3] [--model-type
// generic|transformer|unet-inference]
//        [--auto-cast none|bf16|fp16] MODEL.onnx...

#include "driver/Codegen.h"
#include "driver/WholeProgramCheck.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "runtime/Runtime.h"
#include "support/Error.h"
#include "support/Log.h"

#include <chrono>
#include <cstdio>
#include <iostream>

using namespace nhc;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/** The model's matmul FLOPs (2 per multiply-add of every MatMul, Gemm and Conv, from the ONNX
 *  shapes):
 *  the useful work, whatever the compiled program executes (a tile computed twice, a transpose on
 *  the PE). */
double model_matmul_flops(const Graph &g) {
    double flops = 0;
    for (const Node &n : g.nodes) {
        if (n.op_type == "Conv") { // per output element: Ci / group x kernel taps
            const Shape &w = g.value(n.inputs[1]).shape;
            double taps = 1;
            for (size_t i = 1; i < w.size(); i++)
                taps *= double(w[i]);
            flops += 2.0 * double(shape_numel(g.value(n.outputs[0]).shape)) * taps;
            continue;
        }
        if (n.op_type != "MatMul" && n.op_type != "Gemm")
            continue;
        const Shape &a = g.value(n.inputs[0]).shape;
        int64_t k = a.empty() ? 1 : a.back();
        if (n.op_type == "Gemm" && n.attr_int("transA", 0) != 0)
            k = a.front();
        flops += 2.0 * double(shape_numel(g.value(n.outputs[0]).shape)) * double(k);
    }
    return flops;
}

/** Bytes of weight tables that need not cross HBM: a 2-D table whose only reader gathers rows
 *  of it (an embedding lookup) moves the rows its indices name, at most, not the whole table. */
int64_t ungathered_table_bytes(const Graph &g) {
    int64_t saved = 0;
    for (const Node &n : g.nodes) {
        if (n.op_type != "Gather" || n.attr_int("axis", 0) != 0 || n.inputs.size() < 2)
            continue;
        const Value &table = g.value(n.inputs[0]);
        if (!table.is_constant() || table.shape.size() != 2)
            continue;
        bool only_reader = true;
        for (const Node &m : g.nodes)
            for (const std::string &in : m.inputs)
                only_reader = only_reader && (in != table.name || &m == &n);
        if (!only_reader)
            continue;
        int64_t row = table.shape[1] * dtype_size(table.dtype);
        int64_t whole = table.shape[0] * row;
        int64_t used = shape_numel(g.value(n.inputs[1]).shape) * row;
        saved += std::max<int64_t>(0, whole - used);
    }
    return saved;
}

void bench(const std::string &path, const CompileOptions &o) {
    auto t0 = std::chrono::steady_clock::now();
    Graph g = run_frontend(path, {});
    double flops = model_matmul_flops(g);
    int64_t ungathered = ungathered_table_bytes(g);
    check_operator_support(g);
    apply_graph_passes(g, o);
    // -O3 compiles with the plans its whole-program check keeps, as neuron-halide-cc does.
    CompileOptions codegen = o;
    CheckedPlans checked;
    if (o.optlevel >= 3) {
        checked = check_plans_on_program(g, o);
        use_checked_plans(checked, codegen);
    }
    neff::Program p = generate_program(g, codegen);
    double compile_s = seconds_since(t0);
    int64_t io_bytes = 0, instructions = 0;
    for (const neff::Variable &v : p.vars)
        if (v.kind != neff::VarKind::Scratch)
            io_bytes += v.size_bytes();
    io_bytes -= ungathered;
    for (const auto &s : p.streams)
        instructions += static_cast<int64_t>(s.size());
    const target::TargetInfo &t = target::target_by_name(o.target);
    auto model = rt::Model::load_program(std::move(p));
    rt::ExecOptions eo;
    eo.timing_only = true;
    auto t1 = std::chrono::steady_clock::now();
    rt::ExecResult r = model->execute({}, eo);
    double sim_s = seconds_since(t1);
    const rt::Summary &s = r.summary;
    bool fp32 = o.auto_cast == "none";
    double compute_ns = flops / t.pe_peak_flops_per_ns(fp32, false);
    double memory_ns = double(io_bytes) / t.hbm_bytes_per_ns;
    double bound_ns = std::max(compute_ns, memory_ns);
    std::printf("%s (%s, operands %s)\n", path.c_str(), o.target.c_str(),
                fp32 ? "fp32" : o.auto_cast_type.c_str());
    std::printf(
        "  latency %.1f us   roofline bound %.1f us (%s-bound: compute %.1f us, HBM %.1f us "
        "for %.1f MB)   latency / bound %.2fx\n",
        s.total_ns / 1e3, bound_ns / 1e3, compute_ns >= memory_ns ? "compute" : "memory",
        compute_ns / 1e3, memory_ns / 1e3, io_bytes / 1e6, s.total_ns / bound_ns);
    std::printf("  model flops %.3g (executed %.3g)   MFU %.2f%%   DMA %.1f MB in %lld transfers   "
                "instructions %lld\n",
                flops, s.flops, 100 * compute_ns / s.total_ns, s.dma_bytes / 1e6,
                (long long)s.dma_transfers, (long long)instructions);
    std::printf("  busy: pe %.1f%%  act %.1f%%  dve %.1f%%  pool %.1f%%  sp %.1f%%  dma %.1f%%\n",
                100 * s.busy_fraction(neff::Engine::PE), 100 * s.busy_fraction(neff::Engine::ACT),
                100 * s.busy_fraction(neff::Engine::DVE), 100 * s.busy_fraction(neff::Engine::POOL),
                100 * s.busy_fraction(neff::Engine::SP), 100 * s.dma_busy_fraction());
    std::printf("  host: compile %.2f s, simulate %.2f s\n", compile_s, sim_s);
}

} // namespace

int main(int argc, char **argv) {
    Logger::instance().set_console_level(100);
    register_codegen_operators();
    CompileOptions o;
    std::vector<std::string> models;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--target" && i + 1 < argc) {
            o.target = argv[++i];
        } else if (a == "--model-type" && i + 1 < argc) {
            o.model_type = argv[++i];
        } else if ((a == "-O1" || a == "-O2" || a == "-O3")) {
            o.optlevel = a[2] - '0';
        } else if (a == "--auto-cast" && i + 1 < argc) {
            std::string t = argv[++i];
            o.auto_cast = t == "none" ? "none" : "matmult";
            o.auto_cast_type = t == "none" ? "bf16" : t;
        } else {
            models.push_back(a);
        }
    }
    for (const std::string &m : models) {
        try {
            bench(m, o);
        } catch (const UserError &e) {
            std::printf("%s: %s\n", m.c_str(), e.formatted().c_str());
        }
    }
}
