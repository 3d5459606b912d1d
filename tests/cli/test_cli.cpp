// Runs the neuron-halide-cc binary (path in $NHC_CLI) on good and bad inputs and checks the exit
// status, the error code and that the message names what was wrong. Every case must end with a
// clean exit status: 0, or 1 for a user error; 70 (internal error) or a signal fails the test.

#include "CliRun.h"
#include "support/Npy.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using nhc::test::TempDir;
using namespace nhc::cli_test;

namespace {

const char *kSymbolic = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, 4] x) => (float[batch, 4] y) { y = Relu(x) }
)";

const char *kConstantOutput = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  a = Constant <value = float[2] {1.0, 2.0}> ()
  b = Constant <value = float[2] {3.0, 4.0}> ()
  y = Add(a, b)
}
)";

} // namespace

TEST_CASE("--version and --help") {
    Run v = run("--version");
    CHECK(v.status == 0);
    CHECK(v.has("neuron-halide-cc version"));
    CHECK(v.has("Halide version 14"));
    CHECK(v.has("ONNX version 1.12"));
    Run h = run("--help");
    CHECK(h.status == 0);
    CHECK(h.has("compile"));
    CHECK(h.has("list-operators"));
    Run ch = run("compile --help");
    CHECK(ch.status == 0);
    for (const char *opt : {"--target", "--auto-cast-type", "--input-shape", "--logical-nc-config",
                            "--enable-fast-loading-neuron-binaries", "--dump-graph"})
        CHECK_MESSAGE(ch.has(opt), opt);
    CHECK_FALSE(ch.has("--print-after-all")); // LLVM's own options stay hidden
}

TEST_CASE("list-operators says where every ONNX operator runs: device, host or refused") {
    Run r = run("list-operators");
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.has("MatMul\tdevice\n"));
    CHECK(r.has("Softmax\tdevice\n"));
    CHECK(r.has("TopK\thost\n"));
    CHECK(r.has("NonMaxSuppression\thost\n"));
    CHECK(r.has("CumSum\thost\n"));
    CHECK(r.has("LSTM\thost\n"));
    CHECK(r.has("Det\thost\n"));
    CHECK(r.has("LpPool\thost\n"));
    CHECK(r.has("MaxRoiPool\thost\n"));
    CHECK(r.has("Bernoulli\trefused\n"));
    CHECK(r.has("If\thost\n"));
    CHECK(r.has("Loop\thost\n"));
    CHECK(r.has("Scan\thost\n"));
    CHECK(r.has("Range\thost\n")); // folded on constant inputs, else in a host segment
    // One operator a line, with one of the three answers, sorted.
    std::istringstream lines(r.out);
    std::string line, previous;
    int device = 0, refused = 0;
    while (std::getline(lines, line)) {
        size_t tab = line.find('\t');
        REQUIRE(tab != std::string::npos);
        std::string where = line.substr(tab + 1);
        CHECK((where == "device" || where == "host" || where == "refused"));
        device += where == "device";
        refused += where == "refused";
        CHECK(previous < line.substr(0, tab));
        previous = line.substr(0, tab);
    }
    CHECK(device > 50);
    CHECK(refused > 10);
    // A refused operator in a model is NHC_EUOC002.
    TempDir dir;
    std::string bernoulli = model_file(dir, "bernoulli.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 3] x) => (float[3, 3] y) {
  y = Bernoulli(x)
}
)");
    expect_user_error(run(bernoulli, dir.path.string()), "NHC_EUOC002");
}

TEST_CASE("bad command lines are coded errors naming the option") {
    expect_user_error(run(""), "NHC_EARG010");
    Run unknown = run(example_model() + " --bogus-flag");
    expect_user_error(unknown, "NHC_EARG003");
    CHECK(unknown.has("--bogus-flag"));
    Run bad = run(example_model() + " --auto-cast-type int4");
    expect_user_error(bad, "NHC_EARG002");
    CHECK(bad.has("bf16|fp16|tf32|fp8_e4m3"));
    expect_user_error(run(example_model() + " --lnc 2"), "NHC_EARG001");
    expect_user_error(run(example_model() + " --input-shape x=1,a"), "NHC_EARG011");
}

TEST_CASE("missing, truncated and corrupted model files are coded errors, never crashes") {
    TempDir dir;
    Run missing = run(dir.file("nope.onnx"));
    expect_user_error(missing, "NHC_EIO001");
    CHECK(missing.has("nope.onnx"));
    CHECK(missing.has("Compiler status ERROR"));

    std::ifstream in(example_model(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 1000);
    std::ofstream(dir.file("truncated.onnx"), std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
    expect_user_error(run(dir.file("truncated.onnx")), "NHC_EONX001");

    // Corruptions at many offsets: each must end in a coded rejection with exit status 1, or,
    // when the damage hits only weight bytes, compile (status 0); never a crash.
    for (size_t off = 7; off < bytes.size(); off += bytes.size() / 23) {
        std::string broken = bytes;
        for (size_t i = off; i < std::min(off + 16, broken.size()); i++)
            broken[i] = static_cast<char>(broken[i] ^ 0x5a);
        std::ofstream(dir.file("corrupt.onnx"), std::ios::binary) << broken;
        Run r = run(dir.file("corrupt.onnx"));
        INFO("offset " << off << ": " << r.out);
        CHECK((r.status == 0 || r.status == 1));
        CHECK((r.status == 0) == r.has("Compiler status PASS"));
        CHECK((r.status == 1) == r.has("[NHC_E"));
    }
}

TEST_CASE("a symbolic dimension needs --input-shape") {
    TempDir dir;
    std::string m = model_file(dir, "sym.onnx", kSymbolic);
    Run without = run(m, dir.path.string());
    expect_user_error(without, "NHC_EMOD025");
    CHECK(without.has("'x'"));
    CHECK(without.has("--input-shape"));
    Run with = run(m + " --input-shape x=3,4 --dump-graph", dir.path.string());
    INFO(with.out);
    CHECK(with.has("input  %x : f32[3,4]"));
    CHECK(with.has("%y:f32[3,4] = Relu(%x)"));
    CHECK_FALSE(with.has("NHC_EMOD025"));
    Run wrong = run(m + " --input-shape y=3,4", dir.path.string());
    expect_user_error(wrong, "NHC_EARG012");
    expect_user_error(run(m + " --input-shape x=3,5", dir.path.string()), "NHC_EARG013");
}

TEST_CASE("progress, log file and the final status line") {
    TempDir dir;
    Run r = run(example_model() + " --verbose info --logfile " + dir.file("compile.log"),
                dir.path.string());
    INFO(r.out);
    CHECK(r.has("frontend: load model"));
    CHECK(r.has("codegen: fc1"));
    CHECK(r.has(" ms"));
    // The long steps say how far they are, with the time left until the last tenth.
    CHECK(r.has("code generation: 100% ("));
    CHECK(r.has(" groups), "));
    CHECK(r.has("write NEFF: 100% ("));
    CHECK(r.has(" MB), "));
    CHECK(r.has(" s left"));
    CHECK(r.has("Compiler status PASS"));
    std::ifstream log(dir.file("compile.log"));
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("INFO") != std::string::npos);
    CHECK(text.find("[neuron-halide-cc]: ") != std::string::npos);
    CHECK(text.find("frontend: import graph") != std::string::npos);
    // The default log file goes to the working directory.
    Run quiet = run(example_model(), dir.path.string());
    CHECK(std::filesystem::exists(dir.path / "log-neuron-cc.txt"));
    CHECK_FALSE(quiet.has("code generation: ")); // progress lines are info, not warnings
}

TEST_CASE("unwritable log file and missing schedule file are coded errors") {
    TempDir dir;
    expect_user_error(run(example_model() + " --logfile " + dir.file("no/such/dir/x.log")),
                      "NHC_EIO002");
    expect_user_error(
        run(example_model() + " --schedule " + dir.file("none.sched"), dir.path.string()),
        "NHC_EIO001");
}

TEST_CASE("options whose feature is not implemented yet are refused, not ignored") {
    TempDir dir;
    Run all_fp8 =
        run(example_model() + " --auto-cast all --auto-cast-type fp8_e4m3", dir.path.string());
    expect_user_error(all_fp8, "NHC_ENYI001");
    CHECK(all_fp8.has("--auto-cast all with --auto-cast-type fp8_e4m3 is not implemented"));
    Run lnc = run(example_model() + " --target trn2 --lnc 2", dir.path.string());
    expect_user_error(lnc, "NHC_ENYI001");
    CHECK(lnc.has("--logical-nc-config 2 is not implemented"));
    CHECK(run(example_model() + " --model-type generic --output " + dir.file("g.neff"),
              dir.path.string())
              .status == 0);
    CHECK_FALSE(std::filesystem::exists(dir.path / "file.neff"));
}

TEST_CASE("--model-type transformer and unet-inference compile, and say at -O1 that they change "
          "nothing there") {
    // Their moves are -O2/-O3 moves (tests/e2e/test_model_types.cpp: transformer's attention
    // plans, unet-inference's GroupNorm in one group), and -O1 does not search.
    TempDir dir;
    for (std::string type : {"transformer", "unet-inference"}) {
        CAPTURE(type);
        Run t = run(example_model() + " -O1 --model-type " + type + " --output " +
                        dir.file(type + "1.neff"),
                    dir.path.string());
        CHECK(t.status == 0);
        CHECK(t.has("--model-type " + type +
                    " adds moves to the -O2/-O3 search; -O1 does not search"));
        Run t2 = run(example_model() + " -O2 --model-type " + type + " --output " +
                         dir.file(type + "2.neff"),
                     dir.path.string());
        CHECK(t2.status == 0);
        CHECK_FALSE(t2.has("-O1 does not search"));
        CHECK(std::filesystem::exists(dir.path / (type + "2.neff")));
    }
}

TEST_CASE("--schedule replaces the default schedule of the nodes it names") {
    TempDir dir;
    std::ofstream(dir.file("fc1.sched"))
        << "# N tiles of 64 instead of 128\n"
           "node \"fc1\":\n"
           "  final0.tile(v0, v1, no, mo, ni, mi, 64, 1)\n"
           "  acc.compute_at(final0, no).store_in(PSUM)\n"
           "  acc.update().split(k, ko, ki, 64).reorder(ki, v0, v1, ko)\n"
           "  a_nat.compute_at(acc, ko).store_in(SBUF)\n"
           "  a_tp.compute_at(acc, ko).store_in(PSUM)\n"
           "  lhs_t.compute_at(acc, ko).store_in(SBUF)\n"
           "  rhs.compute_at(acc, ko).store_in(SBUF)\n"
           "  bias.compute_at(final0, no).store_in(SBUF)\n"
           "  out.compute_at(final0, no).store_in(SBUF)\n";
    Run ok = run(example_model() + " --schedule " + dir.file("fc1.sched"), dir.path.string());
    INFO(ok.out);
    CHECK(ok.status == 0);
    std::ofstream(dir.file("bad.sched")) << "node \"fc1\":\n  acc.compute_at(final0 no)\n";
    Run bad = run(example_model() + " --schedule " + dir.file("bad.sched"), dir.path.string());
    expect_user_error(bad, "NHC_ESCH101");
    CHECK(bad.has("bad.sched:2"));
    std::ofstream(dir.file("unknown.sched")) << "node \"fc9\":\n  acc.compute_root()\n";
    expect_user_error(
        run(example_model() + " --schedule " + dir.file("unknown.sched"), dir.path.string()),
        "NHC_ESCH110");
    // A node that a graph pass rewrites (a Conv lowered to a matmul) is refused, not ignored.
    std::string conv = model_file(dir, "conv.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 6, 6] x, float[4, 2, 3, 3] w) => (float[1, 4, 4, 4] y) { y = Conv(x, w) }
)");
    std::ofstream(dir.file("conv.sched")) << "node \"Conv_0\":\n  out.compute_root()\n";
    Run rewritten = run(conv + " --schedule " + dir.file("conv.sched"), dir.path.string());
    expect_user_error(rewritten, "NHC_ESCH110");
    CHECK(rewritten.has("rewritten by the graph passes"));
}

namespace {

/** The relative L2 error --accuracy-report prints for output `name`, or -1. */
double reported_rel_l2(const Run &r, const std::string &name) {
    size_t at = r.out.find("\n  " + name + " ");
    if (at == std::string::npos)
        return -1;
    std::istringstream row(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
    std::string output;
    double elements = 0, max_abs = 0, rel_l2 = -1;
    row >> output >> elements >> max_abs >> rel_l2;
    return rel_l2;
}

} // namespace

TEST_CASE("--auto-cast matmult compiles the example with bf16 matmul operands") {
    TempDir dir;
    Run r = run(example_model() + " --auto-cast matmult --auto-cast-type bf16 --verbose info",
                dir.path.string());
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(r.has("auto-cast: 2 matmul nodes take bf16 operands"));
}

TEST_CASE("--auto-cast all stores every float value in bf16; the NEFF's interface stays float32") {
    TempDir dir;
    Run r = run(example_model() + " --auto-cast all --output all.neff --verbose info",
                dir.path.string());
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.has(" float values stored as bf16"));
    // The example's input and logits stay float32 (its reference files bind as they are), and
    // the report measures what the cast costs.
    CHECK(example_rel_l2(dir, "all.neff") < 0.02);
    Run report = run(example_model() + " --auto-cast all --accuracy-report", dir.path.string());
    CHECK(report.has("accuracy report: --auto-cast all to bf16"));
    CHECK(reported_rel_l2(report, "logits") > 1e-4);
    CHECK(reported_rel_l2(report, "logits") < 0.02);
    // tf32 has float32's bytes: all is matmult.
    Run tf32 = run(example_model() + " --auto-cast all --auto-cast-type tf32 --verbose info",
                   dir.path.string());
    CHECK(tf32.has("auto-cast: 2 matmul nodes take tf32 operands"));
}

TEST_CASE("--auto-cast-type fp8_e4m3 stores the linear layers' weights in fp8 with a scale") {
    TempDir dir;
    Run r =
        run(example_model() +
                " --auto-cast matmult --auto-cast-type fp8_e4m3 --output fp8.neff --verbose info",
            dir.path.string());
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.has("auto-cast: 2 weights (linear layers, convolutions) stored as fp8_e4m3 with a "
                "per-tensor scale"));
    REQUIRE(run(example_model() + " --auto-cast matmult --output bf16.neff", dir.path.string())
                .status == 0);
    // Half the weight bytes of bf16's NEFF (gzip makes the ratio loose), and fp8's three
    // mantissa bits cost more than bf16's seven.
    auto size = [&](const char *f) { return std::filesystem::file_size(dir.path / f); };
    CHECK(size("fp8.neff") < size("bf16.neff") * 3 / 4);
    double fp8_err = example_rel_l2(dir, "fp8.neff"), bf16_err = example_rel_l2(dir, "bf16.neff");
    CHECK(fp8_err < 0.1);
    CHECK(fp8_err > bf16_err);
    Run report = run(example_model() + " --auto-cast matmult --auto-cast-type fp8_e4m3 "
                                       "--accuracy-report",
                     dir.path.string());
    CHECK(report.has("accuracy report: --auto-cast matmult to fp8_e4m3"));
    CHECK(reported_rel_l2(report, "logits") > 1e-3);
}

TEST_CASE("--disable-mixed-precision-accumulation stores bf16 softmax intermediates in bf16") {
    TempDir dir;
    const std::string softmax = model_file(dir, "softmax.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 512] x) => (float[128, 512] y) { y = Softmax <axis = -1> (x) }
)");
    Run off = run(softmax + " --auto-cast all --disable-mixed-precision-accumulation --output "
                            "off.neff --verbose info --enable-fast-loading-neuron-binaries",
                  dir.path.string());
    INFO(off.out);
    REQUIRE(off.status == 0);
    CHECK(off.has("mixed-precision accumulation off: 1 softmax, layer norm and reduction nodes"));
    // What it does to the values is tested in e2e (test_codegen_passes.cpp); the NEFF's
    // info.json (a plain tar here) records it.
    CHECK(read_file(dir.file("off.neff")).find("mixed_precision_accumulation") !=
          std::string::npos);
    // With fp32 data (no --auto-cast all) there is nothing narrower to accumulate in.
    Run fp32 =
        run(softmax + " --disable-mixed-precision-accumulation --verbose info", dir.path.string());
    CHECK(fp32.has("mixed-precision accumulation off: 0 softmax"));
}

TEST_CASE("--accuracy-report compiles without auto-cast and prints each output's error") {
    TempDir dir;
    Run bf16 = run(example_model() + " --auto-cast matmult --auto-cast-type bf16 --accuracy-report",
                   dir.path.string());
    INFO(bf16.out);
    CHECK(bf16.status == 0);
    CHECK(bf16.has("accuracy report: --auto-cast matmult to bf16 against the model compiled "
                   "without auto-cast"));
    CHECK(std::filesystem::exists(dir.path / "file.neff"));
    // The example's logits, with bf16 operands: an error, and a small one.
    double bf16_error = reported_rel_l2(bf16, "logits");
    CHECK(bf16_error > 1e-4);
    CHECK(bf16_error < 0.02);
    // tf32 keeps 10 bits of mantissa to bf16's 7: a smaller error on the same inputs.
    Run tf32 = run(example_model() + " --auto-cast matmult --auto-cast-type tf32 --accuracy-report",
                   dir.path.string());
    INFO(tf32.out);
    double tf32_error = reported_rel_l2(tf32, "logits");
    CHECK(tf32_error > 0);
    CHECK(tf32_error < bf16_error / 4);
    // The same made-up inputs every run: the same report.
    Run again =
        run(example_model() + " --auto-cast matmult --auto-cast-type bf16 --accuracy-report",
            dir.path.string());
    CHECK(reported_rel_l2(again, "logits") == bf16_error);
    Run none = run(example_model() + " --accuracy-report", dir.path.string());
    CHECK(none.status == 0);
    CHECK(none.has("accuracy report: no auto-cast (--auto-cast none)"));
}

TEST_CASE("the example compiles to a NEFF that runs") {
    TempDir dir;
    Run mlp = run(example_model() + " --output " + dir.file("mlp.neff"), dir.path.string());
    INFO(mlp.out);
    CHECK(mlp.status == 0);
    CHECK(mlp.has("Compiler status PASS"));
    REQUIRE(std::filesystem::exists(dir.file("mlp.neff")));
    // The default output name, and a model that folds entirely to constants.
    Run folded = run(model_file(dir, "const.onnx", kConstantOutput), dir.path.string());
    CHECK(folded.status == 0);
    CHECK(std::filesystem::exists(dir.path / "file.neff"));
}

TEST_CASE("--num-parallel-jobs compresses the NEFF on that many threads, to the same bytes") {
    TempDir dir;
    std::string neffs[2];
    int jobs[2] = {1, 3};
    for (int i = 0; i < 2; i++) {
        std::string out = dir.file("j" + std::to_string(jobs[i]) + ".neff");
        Run r = run(example_model() + " --num-parallel-jobs " + std::to_string(jobs[i]) +
                        " --output " + out,
                    dir.path.string());
        INFO(r.out);
        REQUIRE(r.status == 0);
        neffs[i] = read_file(out);
    }
    CHECK(!neffs[0].empty());
    CHECK(neffs[0] == neffs[1]);
}

TEST_CASE("the compile cache: on by default, a second compile is a hit of the same bytes") {
    TempDir dir;
    // The tests' environment turns the cache off (tests/cli/meson.build); a user's has it on,
    // in $XDG_CACHE_HOME/neuron-halide.
    std::string as_user = in_dir(dir.path.string()) + "env -u NEURON_HALIDE_CACHE_DISABLE " +
                          "XDG_CACHE_HOME=" + dir.file("xdg") + " " + cli() + " " +
                          example_model() + " --verbose info --output ";
    Run miss = run_shell(as_user + "miss.neff");
    INFO(miss.out);
    REQUIRE(miss.status == 0);
    CHECK(miss.has("compile cache: no entry "));
    CHECK(miss.has("code generation"));
    CHECK(miss.has("compile cache: stored " + dir.file("xdg") + "/neuron-halide/"));
    Run hit = run_shell(as_user + "hit.neff");
    INFO(hit.out);
    REQUIRE(hit.status == 0);
    CHECK(hit.has("compile cache: hit, entry "));
    CHECK_FALSE(hit.has("code generation"));
    CHECK(hit.has("Compiler status PASS"));
    CHECK(read_file(dir.file("hit.neff")) == read_file(dir.file("miss.neff")));
    // Another option, another entry; --no-cache neither looks nor stores.
    Run o1 = run_shell(as_user + "o1.neff -O1");
    CHECK(o1.has("compile cache: no entry "));
    Run off = run_shell(as_user + "off.neff --no-cache");
    CHECK_FALSE(off.has("compile cache"));
    CHECK(off.has("code generation"));
    CHECK(read_file(dir.file("off.neff")) == read_file(dir.file("miss.neff")));
    size_t stored = 0;
    for (const auto &e : std::filesystem::directory_iterator(dir.file("xdg") + "/neuron-halide"))
        stored += e.path().extension() == ".neff";
    CHECK(stored == 2);
    expect_user_error(run(example_model() + " --cache-dir c --no-cache", dir.path.string()),
                      "NHC_EARG002");
}

TEST_CASE("concurrent compiles of one model into one cache never see a torn entry") {
    TempDir dir;
    // Four at once into an empty cache (four misses storing the same key), then four at once
    // from it (hits while nothing is written); every one succeeds with the same bytes.
    std::string compile = cli() + " " + example_model() + " --cache-dir cache --output ";
    for (const char *round : {"miss", "hit"}) {
        CAPTURE(round);
        std::string cmd = in_dir(dir.path.string()) + "{ ";
        for (int i = 0; i < 4; i++) {
            std::string name = std::string(round) + std::to_string(i);
            cmd += "(" + compile + name + ".neff > " + name + ".log 2>&1; echo $? > " + name +
                   ".status) & ";
        }
        REQUIRE(run_shell(cmd + "wait; }").status == 0);
        for (int i = 0; i < 4; i++) {
            std::string name = std::string(round) + std::to_string(i);
            std::string log = read_file(dir.file(name + ".log")); // not in INFO: it may REQUIRE
            INFO(log);
            CHECK(read_file(dir.file(name + ".status")) == "0\n");
            CHECK(read_file(dir.file(name + ".neff")) == read_file(dir.file("miss0.neff")));
        }
    }
    std::vector<std::filesystem::path> left = nhc::test::sorted_entries(dir.file("cache"));
    REQUIRE(left.size() == 1); // no temporary file stays behind
    CHECK(left[0].extension() == ".neff");
    CHECK(read_file(left[0].string()) == read_file(dir.file("miss0.neff")));
}

TEST_CASE("-O1 compiles the default schedules; -O2 and -O3 search, say so, and stay exact") {
    TempDir dir;
    auto read = [&](const std::string &name) { return read_file(dir.file(name)); };
    Run o1 = run(example_model() + " -O1 --verbose info --output o1.neff", dir.path.string());
    INFO(o1.out);
    CHECK(o1.status == 0);
    CHECK_FALSE(o1.has("autoschedule"));
    for (const char *level : {"2", "3"}) {
        CAPTURE(level);
        std::string neff = std::string("o") + level + ".neff";
        Run r = run(example_model() + " -O" + level + " --verbose info --output " + neff,
                    dir.path.string());
        INFO(r.out);
        CHECK(r.status == 0);
        CHECK(r.has(std::string("autoschedule: -O") + level + ", "));
        CHECK(r.has(" workloads searched, "));
        CHECK(example_rel_l2(dir, neff) <= 1e-4);
        // The search is counted in candidates, not seconds: the same NEFF every time.
        REQUIRE(run(example_model() + " -O" + level + " --output again.neff", dir.path.string())
                    .status == 0);
        CHECK(read(neff) == read("again.neff"));
    }
}

TEST_CASE("the README flow: compile the example, run it, get the reference output") {
    TempDir dir;
    REQUIRE(run(example_model(), dir.path.string()).status == 0);
    CHECK(example_rel_l2(dir, "file.neff") <= 1e-4);
}

TEST_CASE("operators without code generation and unsupported outputs are coded errors") {
    TempDir dir;
    Run unsupported = run(model_file(dir, "bernoulli.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) { y = Bernoulli(x) }
)"),
                          dir.path.string());
    expect_user_error(unsupported, "NHC_EUOC002");
    CHECK(unsupported.has("Bernoulli (1)"));
    Run passthrough = run(model_file(dir, "pass.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] x) { }
)"),
                          dir.path.string());
    expect_user_error(passthrough, "NHC_EGEN017");
}

TEST_CASE("an operand passed at run time is refused, then frozen with --freeze-input and run") {
    TempDir dir;
    std::string m = model_file(dir, "resize.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 2, 2] x, float[4] s) => (float[1, 1, 4, 4] y) {
  y = Resize <mode = "nearest"> (x, , s)
}
)");
    Run refused = run(m, dir.path.string());
    expect_user_error(refused, "NHC_EALG002");
    CHECK(refused.has("--freeze-input s=FILE"));
    nhc::NpyTensor scales, x;
    scales.shape = {4};
    for (float v : {1.f, 1.f, 2.f, 2.f})
        scales.data.insert(scales.data.end(), reinterpret_cast<uint8_t *>(&v),
                           reinterpret_cast<uint8_t *>(&v) + 4);
    x.shape = {1, 1, 2, 2};
    for (float v : {1.f, 2.f, 3.f, 4.f})
        x.data.insert(x.data.end(), reinterpret_cast<uint8_t *>(&v),
                      reinterpret_cast<uint8_t *>(&v) + 4);
    std::vector<uint8_t> sb = nhc::make_npy(scales), xb = nhc::make_npy(x);
    std::ofstream(dir.file("s.npy"), std::ios::binary).write((const char *)sb.data(), sb.size());
    std::ofstream(dir.file("x.npy"), std::ios::binary).write((const char *)xb.data(), xb.size());
    expect_user_error(run(m + " --freeze-input s", dir.path.string()), "NHC_EARG014");
    expect_user_error(run(m + " --freeze-input q=s.npy", dir.path.string()), "NHC_EARG015");
    Run frozen = run(m + " --freeze-input s=s.npy", dir.path.string());
    INFO(frozen.out);
    REQUIRE(frozen.status == 0);
    Run ran =
        run_neff("file.neff --check-races --input x=x.npy --output-dir out", dir.path.string());
    INFO(ran.out);
    REQUIRE(ran.status == 0);
    nhc::NpyTensor y = read_npy(dir, "out/y.npy");
    REQUIRE(y.data.size() == 16 * 4);
    const float *yv = reinterpret_cast<const float *>(y.data.data());
    for (int h = 0; h < 4; h++)
        for (int w = 0; w < 4; w++)
            CHECK(yv[h * 4 + w] == float(1 + (h / 2) * 2 + w / 2)); // nearest, scale 2
}
