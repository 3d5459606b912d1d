// Tensors and graphs too large to compile are coded errors before anything is allocated for them
// (issue 19's resource limits): each compile runs under `ulimit -v` (4 GB of address space; in the
// normal job, not the sanitizer job), so an attempt to allocate one would fail the test rather
// than the machine.

#include "CliRun.h"

#include <cstring>

using namespace nhc::cli_test;

namespace {

/** neuron-halide-cc on `model` in `dir`, its address space limited to 4 GB. Not in the sanitizer
 *  job (scripts/sanitizers.sh): AddressSanitizer reserves terabytes of address space for its
 *  shadow memory at start, and reports any allocation past its own limit instead. */
Run compile_limited(const TempDir &dir, const std::string &model) {
#ifdef __SANITIZE_ADDRESS__
    const std::string limit;
#else
    const std::string limit = "ulimit -v 4000000; ";
#endif
    return run_shell(in_dir(dir.path.string()) + limit + cli() + " " + model);
}

} // namespace

TEST_CASE(
    "a tensor of more elements than 32-bit indices reach, or than 64 bits count, is refused") {
    TempDir dir;
    Run big = compile_limited(dir, model_file(dir, "big.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[60000, 60000] x) => (float[60000, 60000] y) { y = Relu(x) }
)"));
    expect_user_error(big, "NHC_EMOD026");
    CHECK(big.has("tensor 'x' has shape [60000,60000], 3600000000 elements"));
    Run huge = compile_limited(dir, model_file(dir, "huge.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4000000000000, 4000000000000] x) => (float[4000000000000, 4000000000000] y) {
  y = Relu(x)
}
)"));
    expect_user_error(huge, "NHC_EMOD026");
    CHECK(huge.has("overflows a 64-bit integer"));
}

TEST_CASE("a weight whose dims overflow is refused, not matched against its bytes") {
    TempDir dir;
    onnx::ModelProto m = nhc::test::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  s = ReduceSum <keepdims = 0> (w)
  y = Add(x, s)
}
)");
    onnx::TensorProto *w = m.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(int64_t(1) << 62); // times 4 elements times 4 bytes wraps to 0 bytes
    w->add_dims(4);
    w->set_raw_data("");
    Run r = compile_limited(dir, nhc::test::write_model(m, dir.file("w.onnx")));
    expect_user_error(r, "NHC_EMOD026");
    CHECK(r.has("tensor 'w' has shape [4611686018427387904,4]"));
}

TEST_CASE("inputs, outputs and weights past one NeuronCore's HBM are refused") {
    TempDir dir;
    Run r = compile_limited(dir, model_file(dir, "hbm.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1073741823] a, float[1073741823] b, float[1073741823] c, float[1073741823] d)
    => (float[1073741823] y) {
  t = Add(a, b)
  u = Add(t, c)
  y = Add(u, d)
}
)"));
    expect_user_error(r, "NHC_EMOD027");
    CHECK(r.has("take 21474836460 bytes together; one NeuronCore of trn1 addresses 17179869184"));
}

namespace {

/** A model of `chains` chains of `length` Neg nodes each, from input x to outputs o0, o1, ... */
std::string neg_chains(int chains, int length) {
    std::string outputs, body;
    for (int c = 0; c < chains; c++) {
        outputs += (c ? ", float[4] o" : "float[4] o") + std::to_string(c);
        std::string prev = "x";
        for (int i = 0; i < length; i++) {
            std::string out = i + 1 == length ? "o" + std::to_string(c)
                                              : "t" + std::to_string(c) + "_" + std::to_string(i);
            body += "  " + out + " = Neg(" + prev + ")\n";
            prev = out;
        }
    }
    return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[4] x) => (" + outputs + ") {\n" +
           body + "}\n";
}

} // namespace

// A group's Halide lowering grows with the square of its nodes: one group of a chain of 2,000
// took 279 s and 6 GB before groups were capped at 32 nodes (graph/GraphLimits.h). This chain
// compiles in groups of 32 (under 4 GB of address space in the normal job), and its NEFF computes
// it: an odd number of negations, so that a group dropped or computed twice changes the result.
TEST_CASE("a chain of 1,999 elementwise nodes compiles in groups of at most 32 nodes") {
    TempDir dir;
    std::string model = model_file(dir, "deep.onnx", neg_chains(1, 1999));
    Run r = compile_limited(dir, model + " --output deep.neff --verbose info");
    REQUIRE(r.status == 0);
    CHECK(r.has("code generation: 100% (63 of 63 groups)"));
    const std::vector<float> x = {1, -2, 3, -4};
    nhc::NpyTensor in;
    in.dtype = "float32";
    in.shape = {4};
    in.data.resize(sizeof x[0] * x.size());
    std::memcpy(in.data.data(), x.data(), in.data.size());
    std::vector<uint8_t> npy = nhc::make_npy(in);
    std::ofstream(dir.file("x.npy"), std::ios::binary).write((const char *)npy.data(), npy.size());
    Run run = run_neff("deep.neff --input x=x.npy --output-dir out", dir.path.string());
    INFO(run.out);
    REQUIRE(run.status == 0);
    std::vector<float> minus_x = {-1, 2, -3, 4};
    std::vector<uint8_t> want(in.data.size());
    std::memcpy(want.data(), minus_x.data(), want.size());
    CHECK(read_npy(dir, "out/o0.npy").data == want);
}

TEST_CASE("a model past the node or graph input and output limits is refused as it is read") {
    TempDir dir;
    Run nodes = compile_limited(dir, model_file(dir, "nodes.onnx", neg_chains(1, 50001)));
    expect_user_error(nodes, "NHC_EONX011");
    CHECK(nodes.has("has more than 50000 nodes (its graph, subgraphs and local functions, each "
                    "call of a function counted as its nodes); the compiler takes at most 50000"));
    Run outputs = compile_limited(dir, model_file(dir, "outputs.onnx", neg_chains(10000, 1)));
    expect_user_error(outputs, "NHC_EONX011");
    CHECK(outputs.has("declares 1 graph inputs and 10000 outputs; the compiler takes at most 10000 "
                      "together"));
}

namespace {

/** `length` Neg nodes from `from` to `to` in textual ONNX, intermediates named `tag`0, `tag`1... */
std::string neg_chain_text(int length, const std::string &from, const std::string &to,
                           const std::string &tag) {
    std::string body, prev = from;
    for (int i = 0; i < length; i++) {
        std::string out = i + 1 == length ? to : tag + std::to_string(i);
        body += "  " + out + " = Neg(" + prev + ")\n";
        prev = out;
    }
    return body;
}

} // namespace

TEST_CASE("nodes in subgraphs and in local functions, each call expanded, count toward the limit") {
    TempDir dir;
    // An If of 25,000 nodes per branch: 50,001 with the If, though the main graph has one node.
    Run branches =
        compile_limited(dir, model_file(dir, "if.onnx",
                                        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                                        "g (bool c, float[4] x) => (float[4] y) {\n"
                                        "  y = If (c) <then_branch = g1 () => (float[4] a) {\n" +
                                            neg_chain_text(25000, "x", "a", "p") +
                                            "}, else_branch = g2 () => (float[4] b) {\n" +
                                            neg_chain_text(25000, "x", "b", "q") + "}>\n}\n"));
    expect_user_error(branches, "NHC_EONX011");
    CHECK(branches.has("has more than 50000 nodes"));
    // 250 calls of a function of 250 nodes: 500 nodes written, 62,750 for shape inference to walk.
    Run calls = compile_limited(
        dir, model_file(
                 dir, "calls.onnx",
                 "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\n"
                 "g (float[4] x) => (float[4] y) {\n" +
                     [] {
                         std::string body, prev = "x";
                         for (int i = 0; i < 250; i++) {
                             std::string out = i == 249 ? "y" : "c" + std::to_string(i);
                             body += "  " + out + " = local.f(" + prev + ")\n";
                             prev = out;
                         }
                         return body;
                     }() +
                     "}\n<domain: \"local\", opset_import: [\"\" : 17]>\nf (a) => (b) {\n" +
                     neg_chain_text(250, "a", "b", "t") + "}\n"));
    expect_user_error(calls, "NHC_EONX011");
    CHECK(calls.has("each call of a function counted as its nodes"));
}

// ONNX 1.12's shape inference follows a call into a local function's body without looking for a
// cycle: a function that calls itself overflowed the stack (SIGSEGV, found by hand in review of
// the front end's limits). The call graph is checked first, without recursion.
TEST_CASE("local functions that call themselves, or are declared twice, are refused") {
    TempDir dir;
    const std::string header = "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\n"
                               "g (float[4] x) => (float[4] y) { y = local.f(x) }\n";
    const std::string local = "<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>\n";
    Run self = compile_limited(
        dir, model_file(dir, "self.onnx",
                        header + local + "f (a) => (b) { t = Neg(a)\n b = local.f(t) }\n"));
    expect_user_error(self, "NHC_EONX012");
    CHECK(self.has("the local function 'local.f' calls itself"));
    Run mutual = compile_limited(
        dir, model_file(dir, "mutual.onnx",
                        header + local + "f (a) => (b) { b = local.h(a) }\n" + local +
                            "h (a) => (b) { b = If (a) <then_branch = t () => (float[4] c) "
                            "{ c = local.f(a) }, else_branch = e () => (float[4] d) "
                            "{ d = Neg(a) }> }\n"));
    expect_user_error(mutual, "NHC_EONX012");
    CHECK(mutual.has("the local function 'local.f' calls itself, directly or through other"));
    Run twice = compile_limited(dir, model_file(dir, "twice.onnx",
                                                header + local + "f (a) => (b) { b = Neg(a) }\n" +
                                                    local + "f (a) => (b) { b = Abs(a) }\n"));
    expect_user_error(twice, "NHC_EONX012");
    CHECK(twice.has("declares the local function 'local.f' twice"));
}
