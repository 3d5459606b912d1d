// End to end on the development models of ../shared/models (when present): compile with the
// default schedules, simulate on trn1, compare with PyTorch's outputs: relative L2 error at most
// 1e-4 in fp32. A model with an operator outside `list-operators` is reported and skipped.

#include "E2E.h"
#include "frontend/Frontend.h"
#include "graph/OperatorSupport.h"
#include "neff/NeffFile.h"
#include "support/Log.h"

#include <doctest/doctest.h>

using namespace nhc;
namespace fs = std::filesystem;

namespace {

struct Quiet {
    Quiet() {
        Logger::instance().set_console_level(100);
        register_codegen_operators();
    }
} quiet;

/** Runs every supported development model with `o`; checks rel L2 <= tol; returns the summed
 *  simulated time in us (0 when ../shared is absent). */
double run_models(const CompileOptions &o, double tol) {
    fs::path dir = fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models";
    if (!fs::is_directory(dir)) {
        MESSAGE("../shared/models not present: nothing to check");
        return 0;
    }
    std::vector<fs::path> cases;
    for (const auto &e : fs::directory_iterator(dir))
        if (fs::exists(e.path() / "model.onnx"))
            cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    int checked = 0;
    double total_us = 0;
    for (const fs::path &c : cases) {
        Graph g = run_frontend((c / "model.onnx").string(), {});
        try {
            check_operator_support(g);
        } catch (const UserError &e) {
            MESSAGE("skipped " << c.filename().string() << ": " << e.code());
            continue;
        }
        test::E2EResult r =
            test::compile_and_run(g, test::read_inputs(g, c / "test_data_set_0"), o);
        total_us += r.summary.total_ns / 1000;
        for (size_t i = 0; i < g.outputs.size(); i++) {
            HostTensor want =
                test::read_pb(c / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
            test::Comparison cmp = test::compare(r.outputs.at(g.outputs[i]), want, 1e-3, 1e-4);
            INFO(c.filename().string() << " output " << g.outputs[i] << ": rel L2 " << cmp.rel_l2
                                       << ", simulated " << r.summary.total_ns / 1000 << " us");
            CHECK(cmp.rel_l2 <= tol);
        }
        checked++;
    }
    CHECK(checked >= 8);
    return total_us;
}

} // namespace

TEST_CASE("development models compile, run on the simulator and match PyTorch (fp32, bf16, all "
          "bf16, tf32)") {
    CompileOptions fp32;
    double fp32_us = run_models(fp32, 1e-4);
    // -O1 and -O3 select the same default schedules for now; they compile and match too.
    for (int level : {1, 3}) {
        CompileOptions o = fp32;
        o.optlevel = level;
        run_models(o, 1e-4);
    }
    CompileOptions bf16;
    bf16.auto_cast = "matmult";
    bf16.auto_cast_type = "bf16";
    double bf16_us = run_models(bf16, 2e-2);
    // bf16 operands halve the weight bytes and run the PE at 4x the fp32 rate.
    if (fp32_us > 0)
        CHECK(bf16_us < fp32_us);
    // --auto-cast all: every float value stored in bf16 (softmax and layer norm still accumulate
    // in fp32 on the engines); the inputs and outputs stay float32.
    CompileOptions all = bf16;
    all.auto_cast = "all";
    double all_us = run_models(all, 3e-2);
    if (fp32_us > 0)
        CHECK(all_us < fp32_us);
    // tf32 keeps 10 mantissa bits (bf16: 7) and runs the PE at the bf16 rate.
    CompileOptions tf32 = bf16;
    tf32.auto_cast_type = "tf32";
    double tf32_us = run_models(tf32, 5e-3);
    if (fp32_us > 0)
        CHECK(tf32_us < fp32_us);
}

TEST_CASE("a NEFF is byte-identical across two compiles of the same model and flags") {
    // In one process, so that Halide's global name counter differs between the two compiles.
    std::vector<std::string> models = {std::string(NHC_SOURCE_DIR) + "/examples/mlp/model.onnx"};
    fs::path bert = fs::path(NHC_SOURCE_DIR) / ".." / "shared" / "models" / "dev_bert_layer";
    if (fs::exists(bert / "model.onnx"))
        models.push_back((bert / "model.onnx").string());
    for (const std::string &m : models) {
        for (const char *cast : {"none", "matmult"}) {
            CompileOptions o;
            o.auto_cast = cast;
            std::vector<uint8_t> bytes[2];
            for (auto &b : bytes) {
                Graph g = run_frontend(m, {});
                apply_graph_passes(g, o);
                b = neff::write_neff(generate_program(g, o));
            }
            INFO(m << " auto-cast " << cast);
            CHECK(bytes[0] == bytes[1]);
        }
    }
}

namespace {

/** Compiles and runs C = A·B of two runtime inputs with each auto-cast of `casts`, and compares
 *  with a double-precision host product. */
void check_large_matmul(int64_t M, int64_t K, int64_t N, const std::vector<const char *> &casts) {
    Graph g;
    g.opset = 17;
    g.values["a"] = Value{"a", DType::Float32, {M, K}, nullptr};
    g.values["b"] = Value{"b", DType::Float32, {K, N}, nullptr};
    g.values["c"] = Value{"c", DType::Float32, {M, N}, nullptr};
    g.inputs = {"a", "b"};
    g.outputs = {"c"};
    Node mm;
    mm.name = "mm";
    mm.op_type = "MatMul";
    mm.inputs = {"a", "b"};
    mm.outputs = {"c"};
    g.nodes.push_back(mm);
    HostTensor a(DType::Float32, {M, K}), b(DType::Float32, {K, N});
    uint32_t seed = 12345;
    auto next = [&] { // a fixed LCG: the same data on every machine
        seed = seed * 1664525u + 1013904223u;
        return static_cast<double>(seed >> 8) / double(1u << 24) - 0.5;
    };
    for (int64_t i = 0; i < a.numel(); i++)
        a.set_f64(i, next());
    for (int64_t i = 0; i < b.numel(); i++)
        b.set_f64(i, next());
    HostTensor want(DType::Float32, {M, N});
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += a.get_f64(i * K + k) * b.get_f64(k * N + j);
            want.set_f64(i * N + j, acc);
        }
    for (const char *cast : casts) {
        CompileOptions o;
        o.auto_cast = cast;
        test::E2EResult r = test::compile_and_run(g, {{"a", a}, {"b", b}}, o);
        test::Comparison cmp = test::compare(r.outputs.at("c"), want, 1.0, 1.0);
        INFO(M << "x" << K << "x" << N << ", auto-cast " << cast << ": rel L2 " << cmp.rel_l2);
        CHECK(cmp.rel_l2 <= (std::string(cast) == "none" ? 1e-5 : 2e-2));
    }
}

} // namespace

TEST_CASE("a large MatMul of two runtime inputs (A resident, B per column tile) is correct") {
    // 512 x 768 @ 768 x 1024: A^T is built on chip by PE transposes and kept whole; B is staged
    // per column tile.
    check_large_matmul(512, 768, 1024, {"none", "matmult"});
}

TEST_CASE("a large MatMul whose A^T does not fit on chip keeps B resident, and is correct") {
    // In fp32, A^T (16 K chunks x 1536 rows x 4 bytes per partition) is over the resident budget
    // and B (16 x 256 x 4) is not: B stays on chip in K chunks, A is transposed per row tile.
    check_large_matmul(1536, 2048, 256, {"none"});
}
