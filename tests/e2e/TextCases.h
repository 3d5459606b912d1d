#ifndef NHC_TESTS_TEXTCASES_H
#define NHC_TESTS_TEXTCASES_H

// What the code-generation tests written as ONNX text share: load a model, compile it to a
// program, deterministic inputs, DMAs of a program, and the worst error against the host
// reference (algorithms/Reference).

#include "../unit/TestModels.h"
#include "E2E.h"
#include "algorithms/Reference.h"
#include "frontend/Frontend.h"
#include "support/Log.h"

#include <doctest/doctest.h>

#include <functional>

namespace nhc::test {

inline Graph load_text(const std::string &text) {
    Logger::instance().set_console_level(100);
    TempDir dir;
    return run_frontend(write_model(parse_model(text), dir.file("m.onnx")), {});
}

/** Three layers, x [rows, k] times [k, hidden] (then a Relu), [hidden, k] and [k, n]: three
 *  matmul groups, each output read by the next group only. */
inline std::string three_layers(int64_t rows, int64_t k, int64_t hidden, int64_t n) {
    auto s = [](int64_t v) { return std::to_string(v); };
    return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[" + s(rows) + ", " + s(k) +
           "] x, float[" + s(k) + ", " + s(hidden) + "] w1, float[" + s(hidden) + ", " + s(k) +
           "] w2, float[" + s(k) + ", " + s(n) + "] w3) => (float[" + s(rows) + ", " + s(n) +
           "] y) {\n  h1 = MatMul(x, w1)\n  r1 = Relu(h1)\n  h2 = MatMul(r1, w2)\n"
           "  y = MatMul(h2, w3)\n}\n";
}

/** One MatMul, x [m, k] times w [k, n] = y, fp32. */
inline std::string one_matmul(int64_t m, int64_t k, int64_t n) {
    auto s = [](int64_t v) { return std::to_string(v); };
    return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[" + s(m) + ", " + s(k) +
           "] x, float[" + s(k) + ", " + s(n) + "] w) => (float[" + s(m) + ", " + s(n) +
           "] y) {\n  y = MatMul(x, w)\n}\n";
}

/** Two matmuls with a Relu between: under auto-cast, h (read only by the second matmul) is a
 *  bf16 operand that the first group's tiles hold in fp32 until its writer rounds it. */
inline constexpr const char *kMatmulReluMatmul = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256, 384] x, float[384, 512] w1, float[512, 256] w2) => (float[256, 256] y) {
  a = MatMul(x, w1)
  h = Relu(a)
  y = MatMul(h, w2)
}
)";

/** The node of `g` whose first output is `value` (FAIL if none). */
inline const Node &node_with_output(const Graph &g, const std::string &value) {
    for (const Node &n : g.nodes)
        if (n.outputs[0] == value)
            return n;
    FAIL("no node writes " << value);
    throw;
}

/** `g` through the graph passes and the code generator (g itself is left as loaded). */
inline neff::Program compile_graph(Graph g, const CompileOptions &o = {}) {
    apply_graph_passes(g, o);
    return generate_program(g, o);
}

/** The coded error compiling `g` raises, as "NHC_Exxx: message", or "" when it compiles. */
inline std::string compile_error(const Graph &g) {
    try {
        compile_graph(g);
    } catch (const UserError &e) {
        return std::string(e.code()) + ": " + e.what();
    }
    return "";
}

inline neff::Program compile_text(const std::string &text) {
    return compile_graph(load_text(text));
}

/** Deterministic values, uniform in [-1, 1), for every graph input (a generator per input). */
inline std::map<std::string, HostTensor> random_inputs(const Graph &g, uint32_t seed) {
    std::map<std::string, HostTensor> inputs;
    for (const std::string &name : g.inputs) {
        HostTensor t(DType::Float32, g.value(name).shape);
        uint32_t state = seed + static_cast<uint32_t>(name.size() * 31 + name.back());
        for (int64_t i = 0; i < t.numel(); i++) {
            state = state * 1664525u + 1013904223u;
            t.set_f64(i, double(state >> 8) / double(1 << 23) - 1.0);
        }
        inputs[name] = t;
    }
    return inputs;
}

/** Calls `f` on each DMA of the program that reads the HBM variable `name`. */
template <typename F>
void for_each_dma_reading(const neff::Program &p, const std::string &name, F f) {
    for (const auto &stream : p.streams)
        for (const neff::Instr &i : stream)
            if (i.op == neff::Opcode::Dma && i.src.space == neff::MemSpace::HBM &&
                p.vars.at(static_cast<size_t>(i.src.var)).name == name)
                f(i);
}

/** DMAs in the program that read the HBM variable `name`. */
inline int dmas_reading(const neff::Program &p, const std::string &name) {
    int count = 0;
    for_each_dma_reading(p, name, [&](const neff::Instr &) { count++; });
    return count;
}

/** The bytes that DMAs read from HBM variable `name`. */
inline int64_t bytes_read_from(const neff::Program &p, const std::string &name) {
    int64_t bytes = 0;
    for_each_dma_reading(p, name, [&](const neff::Instr &i) {
        bytes += int64_t(i.src.num_partitions) * i.src.free_count() * neff::dtype_size(i.src.dtype);
    });
    return bytes;
}

/** PE matmuls that contract `partitions` rows (a full channel chunk, one tap). */
inline int matmuls_contracting(const neff::Program &p, int partitions) {
    int count = 0;
    for (const neff::Instr &i : p.stream(neff::Engine::PE))
        count += i.op == neff::Opcode::Matmul && i.src.num_partitions == partitions;
    return count;
}

/** Compiles and simulates `g`; the largest relative L2 error of `outputs` against the host
 *  reference (test::compare with rtol and atol). */
inline double worst_rel_l2(const Graph &g, const std::map<std::string, HostTensor> &inputs,
                           const std::vector<std::string> &outputs, double rtol, double atol) {
    auto want = alg::run_reference(g, inputs);
    E2EResult got = compile_and_run(g, inputs);
    double worst = 0;
    for (const std::string &out : outputs)
        worst = std::max(worst, compare(got.outputs.at(out), want.at(out), rtol, atol).rel_l2);
    return worst;
}

/** GPT-2's attention over `seq` positions, two heads of 64: scores / sqrt(64), Where(tril,
 *  scores, fill) (finfo.min by default), Softmax, P·V; K as stored rows ([.., seq, 64]) when
 *  `k_rows`. */
inline Graph causal_attention(int seq, bool k_rows, const std::string &fill = "-3.4028235e38") {
    std::string mask, n = std::to_string(seq);
    for (int i = 0; i < seq; i++)
        for (int j = 0; j < seq; j++)
            mask += std::string(mask.empty() ? "" : ", ") + (j <= i ? "1" : "0");
    std::string k_type = k_rows ? "float[1, 2, " + n + ", 64] k" : "float[1, 2, 64, " + n + "] kt";
    return test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, )" + n + R"(, 64] q, )" +
                           k_type + R"(, float[1, 2, )" + n + R"(, 64] v)
    => (float[1, 2, )" + n +
                           R"(, 64] o) <bool[1, 1, )" + n + ", " + n + "] m = {" + mask +
                           R"(}, float f = {)" + fill + R"(}, float c = {8.0}> {)" +
                           (k_rows ? "\n  kt = Transpose <perm = [0, 1, 3, 2]> (k)" : "") + R"(
  s = MatMul(q, kt)
  d = Div(s, c)
  w = Where(m, d, f)
  p = Softmax(w)
  o = MatMul(p, v)
}
)");
}

/** What a compiler move that must not change values is checked with: `g` compiled with `o` at
 *  -O1 and at -O2 (o's own level is not used), check(level, program) called on each program,
 *  each run on `inputs`, and output `output` required to hold the same values, element by
 *  element, at both levels. */
inline void
require_same_values_at_o1_and_o2(const Graph &g, const std::map<std::string, HostTensor> &inputs,
                                 CompileOptions o, const std::string &output,
                                 const std::function<void(int, const neff::Program &)> &check) {
    HostTensor at[2];
    for (int level : {1, 2}) {
        CAPTURE(level);
        o.optlevel = level;
        neff::Program p = compile_graph(g, o);
        check(level, p);
        at[level - 1] = run_program(std::move(p), g, inputs).outputs.at(output);
    }
    REQUIRE(at[0].numel() == at[1].numel());
    for (int64_t i = 0; i < at[0].numel(); i++)
        REQUIRE(at[0].get_f64(i) == at[1].get_f64(i));
}

} // namespace nhc::test

#endif
