// neff-as, neuron-halide-run and neff-dump as a user runs them (paths in $NHC_AS, $NHC_RUN,
// $NHC_DUMP): assemble, run with .npy and .pb inputs, outputs and reports, dump and re-assemble,
// and the coded errors of the command lines.

#include "BackendTest.h"

#include "neff/DefJson.h"
#include "neff/NeffFile.h"
#include "support/TensorFile.h"

#include <llvm/Support/JSON.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nhc;
using namespace nhc::test;

namespace {

std::string tool(const char *env) {
    const char *p = std::getenv(env);
    REQUIRE_MESSAGE(p != nullptr, "set ", env);
    return p;
}

struct Run {
    int status;
    std::string out, err;
};

/** A fresh directory under /tmp for one test's files, removed with everything in it when the test
 *  ends. */
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/nhc_tools_XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;
};

std::string slurp(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Run sh(const std::string &dir, const std::string &cmd) {
    std::string full = "cd " + dir + " && " + cmd + " > out.txt 2> err.txt";
    int rc = std::system(full.c_str());
    Run r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir + "/out.txt"), slurp(dir + "/err.txt")};
    MESSAGE(cmd << " -> " << r.status << "\n" << r.err);
    return r;
}

void write(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
}

void write_npy(const std::string &path, const std::vector<int64_t> &shape,
               const std::vector<float> &v) {
    NpyTensor t;
    t.shape = shape;
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    write_npy_file(path, t);
}

std::vector<float> read_floats(const std::string &path) {
    NpyTensor t = read_tensor_file(path);
    REQUIRE(t.dtype == "float32");
    std::vector<float> v(t.data.size() / 4);
    std::memcpy(v.data(), t.data.data(), t.data.size());
    return v;
}

const char *kKernel =
    R"(; y = relu(x @ w): x [128, 128] f32 is cast to bf16 by the DMA, w is a bf16 weight
.target trn1
.name tool_kernel
.var x input f32 [128,128]
.var w weight bf16 [128,64] file="w.npy"
.var y output f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.bf16[0:128,0][[1,128]] src=hbm.f32[x,0][[4,128],[512,128]] signal=s0 name="xT"
  dma queue=1 dst=sbuf.bf16[0:128,256][[1,64]] src=hbm.bf16[w,0][[128,128],[2,64]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,512][[1,64]] wait=s2>=1
.engine pe
  matmul dst=psum.f32[0:128,0][[1,64]] stationary=sbuf.bf16[0:128,0][[1,128]] moving=sbuf.bf16[0:128,256][[1,64]] wait=s0>=2 signal=s1 name="mm/MatMul"
.engine act
  activation dst=sbuf.f32[0:128,512][[1,64]] src=psum.f32[0:128,0][[1,64]] func=relu wait=s1>=1 signal=s2 name="mm/Relu"
)";

} // namespace

TEST_CASE("assemble, run with .npy and .pb inputs, write outputs, summary and trace") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    auto x = random_floats(128 * 128, 60), w = random_floats(128 * 64, 61);
    write(dir + "/k.s", kKernel);
    write_npy(dir + "/x.npy", {128, 128}, x);
    write_npy(dir + "/w.npy", {128, 64}, w);
    REQUIRE(sh(dir, tool("NHC_AS") + " k.s -o k.neff").status == 0);

    Run r = sh(dir,
               tool("NHC_RUN") +
                   " k.neff --input x=x.npy --output-dir . --summary-json s.json --profile t.json");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("output y: f32 [128,64]") != std::string::npos);
    CHECK(r.out.find("latency:") != std::string::npos);
    // With --profile, where the time goes, per named group of instructions.
    CHECK(r.out.find("where the time goes") != std::string::npos);
    CHECK(r.out.find("  mm/MatMul\n") != std::string::npos);
    auto y = read_floats(dir + "/y.npy");
    auto xb = rounded(neff::DType::BF16, x), wb = rounded(neff::DType::BF16, w);
    double worst = 0;
    for (int m = 0; m < 128; m++) {
        for (int n = 0; n < 64; n++) {
            double ref = 0;
            for (int k = 0; k < 128; k++) {
                ref += double(xb[size_t(m * 128 + k)]) * wb[size_t(k * 64 + n)];
            }
            worst = std::max(worst, std::fabs(y[size_t(m * 64 + n)] - std::max(ref, 0.0)));
        }
    }
    CHECK(worst < 1e-4);
    auto js = llvm::json::parse(slurp(dir + "/s.json"));
    REQUIRE(bool(js));
    const auto &o = *js->getAsObject();
    for (const char *key : {"total_time_us", "mfu", "flops", "dma_bytes"}) {
        CHECK_MESSAGE(o.get(key) != nullptr, key);
    }
    CHECK(o.getNumber("mfu").getValue() > 0);
    CHECK(o.getNumber("mfu").getValue() < 1);
    CHECK(o.getObject("engines")->getObject("pe")->getNumber("busy_fraction").getValue() > 0);
    std::string trace = slurp(dir + "/t.json");
    CHECK(trace.find("matmul mm/MatMul") != std::string::npos);
    CHECK(bool(llvm::json::parse(trace)));

    // The same input as an onnx TensorProto (.pb), as in the ONNX backend test data.
    onnx::TensorProto p;
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_dims(128);
    p.add_dims(128);
    p.set_raw_data(std::string(reinterpret_cast<const char *>(x.data()), x.size() * 4));
    std::ofstream(dir + "/x.pb", std::ios::binary) << p.SerializeAsString();
    REQUIRE(sh(dir, "mkdir -p pb && " + tool("NHC_RUN") + " k.neff --input x=x.pb --output-dir pb")
                .status == 0);
    CHECK(read_floats(dir + "/pb/y.npy") == y);

    // neff-dump shows the header, the variables and the disassembly.
    Run d = sh(dir, tool("NHC_DUMP") + " k.neff");
    REQUIRE(d.status == 0);
    for (const char *s : {"pkg_version         1", "header_size         1024", "tool_kernel",
                          "w weight bf16 [128,64]", ".engine pe", "name=\"mm/MatMul\""}) {
        CHECK_MESSAGE(d.out.find(s) != std::string::npos, s);
    }
}

TEST_CASE("neff-dump output re-assembles into the same NEFF") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    std::string k = kKernel;
    k.replace(k.find("weight bf16 [128,64] file=\"w.npy\""), 33, "input bf16 [128,64]");
    write(dir + "/k.s", k);
    REQUIRE(sh(dir, tool("NHC_AS") + " k.s -o a.neff --fast-loading").status == 0);
    Run d = sh(dir, tool("NHC_DUMP") + " a.neff");
    REQUIRE(d.status == 0);
    write(dir + "/d.s", d.out);
    REQUIRE(sh(dir, tool("NHC_AS") + " d.s -o b.neff --fast-loading").status == 0);
    CHECK(slurp(dir + "/a.neff") == slurp(dir + "/b.neff"));
    CHECK(sh(dir, "tail -c +1025 a.neff | tar tf - | grep -c sg00/").out == "6\n");
}

TEST_CASE("command-line errors are coded and exit 1") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    write(dir + "/k.s", kKernel);
    write_npy(dir + "/w.npy", {128, 64}, random_floats(128 * 64, 62));
    write_npy(dir + "/x.npy", {128, 128}, random_floats(128 * 128, 63));
    write_npy(dir + "/bad.npy", {64, 128}, random_floats(64 * 128, 64));
    write(dir + "/junk.npy", "not a tensor");
    REQUIRE(sh(dir, tool("NHC_AS") + " k.s -o k.neff").status == 0);
    std::string run = tool("NHC_RUN") + " k.neff ";
    auto expect = [&](const Run &r, const char *code) {
        CHECK(r.status == 1);
        CHECK_MESSAGE(r.err.find(code) != std::string::npos, code);
    };
    expect(sh(dir, run + "--input x"), "NHC_ERT015");
    expect(sh(dir, run), "NHC_ERT001");
    Run missing = sh(dir, run);
    CHECK(missing.err.find("NRT_EXEC_BAD_INPUT") != std::string::npos);
    expect(sh(dir, run + "--input x=x.npy --input q=x.npy"), "NHC_ERT002");
    expect(sh(dir, run + "--input x=bad.npy"), "NHC_ERT003");
    expect(sh(dir, run + "--input x=junk.npy"), "NHC_ERT013");
    expect(sh(dir, run + "--input x=x.txt"), "NHC_ERT013");
    // The kernel has 5 instructions: a budget of 4 refuses it before it runs, 5 runs it.
    Run over = sh(dir, run + "--input x=x.npy --max-instructions 4");
    expect(over, "NHC_ERT022");
    CHECK(over.err.find("has 5 instructions; the run may execute at most 4") != std::string::npos);
    CHECK(sh(dir, run + "--input x=x.npy --max-instructions 5").status == 0);
    expect(sh(dir, tool("NHC_RUN") + " nothere.neff"), "NHC_ENEFF010");
    expect(sh(dir, tool("NHC_RUN") + " k.neff --target trn2 --input x=x.npy"), "NHC_ENEFF009");
    expect(sh(dir, "cp k.neff c.neff && printf 'X' | dd of=c.neff bs=1 seek=1100 conv=notrunc "
                   "2>/dev/null && " +
                       tool("NHC_DUMP") + " c.neff"),
           "NHC_ENEFF003");
    write_npy(dir + "/w.npy", {128, 32}, random_floats(128 * 32, 65));
    expect(sh(dir, tool("NHC_AS") + " k.s -o k2.neff"), "NHC_EASM006");
}

TEST_CASE("neff-as takes a bool weight from a bool file, a bfloat16 one from uint16 bits") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    write(dir + "/k.s", R"(.target trn1
.name flags
.var m weight u8 [1,4] bool file="m.npy"
.var b weight bf16 [1,2] file="b.npy"
.var y output u8 [1,4]
.engine sp
  dma queue=0 dst=hbm.u8[y,0][[4,1],[1,4]] src=hbm.u8[m,0][[4,1],[1,4]]
)");
    NpyTensor m{"bool", {1, 4}, {1, 0, 0, 1}}, b{"uint16", {1, 2}, {0xc0, 0x3f, 0x00, 0xc1}};
    write_npy_file(dir + "/m.npy", m);
    write_npy_file(dir + "/b.npy", b);
    REQUIRE(sh(dir, tool("NHC_AS") + " k.s -o k.neff").status == 0);
    neff::NeffContents c = neff::read_neff_file(dir + "/k.neff", {});
    CHECK(c.program.vars[0].holds_bool);
    CHECK(c.program.vars[0].bytes() == m.data);
    CHECK(c.program.vars[1].bytes() == b.data); // 1.5 and -8 in bfloat16
    CHECK(sh(dir, tool("NHC_DUMP") + " k.neff").out.find(".var m weight u8 [1,4] bool") !=
          std::string::npos);
    // A bool weight takes bool data, not the uint8 the device holds it in.
    write_npy_file(dir + "/m.npy", NpyTensor{"uint8", {1, 4}, {1, 0, 0, 1}});
    Run u8 = sh(dir, tool("NHC_AS") + " k.s -o k2.neff");
    CHECK(u8.status == 1);
    CHECK(u8.err.find("weight 'm' is bool, file './m.npy' holds uint8") != std::string::npos);
}

TEST_CASE("neuron-halide-run --timing-only times without values or inputs") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    write(dir + "/k.s", kKernel);
    write_npy(dir + "/w.npy", {128, 64}, random_floats(128 * 64, 61));
    REQUIRE(sh(dir, tool("NHC_AS") + " k.s -o k.neff").status == 0);
    Run f = sh(dir, tool("NHC_RUN") + " k.neff --timing-only --summary-json t.json");
    REQUIRE(f.status == 0);
    CHECK(f.out.find("timing only: no values were computed") != std::string::npos);
    CHECK(f.out.find("output y") == std::string::npos);
    CHECK(f.out.find("latency:") != std::string::npos);
    auto js = llvm::json::parse(slurp(dir + "/t.json"));
    REQUIRE(bool(js));
    CHECK(js->getAsObject()->getNumber("total_time_us").getValue() > 0);
}

TEST_CASE("neuron-halide-run --check-races stops at an unsynchronised pair") {
    // The store reads what the compute writes, without waiting for it: the simulated order
    // happens to be right (the DMA's fixed latency), the hardware's need not be.
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    write(dir + "/r.s", R"(.target trn1
.var y output f32 [128,64]
.engine act
  activation dst=sbuf.f32[0:128,0][[1,64]] src=sbuf.f32[0:128,4096][[1,64]] func=exp name="model/exp"
.engine sp
  dma queue=0 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,0][[1,64]] name="model/store"
)");
    REQUIRE(sh(dir, tool("NHC_AS") + " r.s -o r.neff").status == 0);
    CHECK(sh(dir, tool("NHC_RUN") + " r.neff --timing-only").status == 0);
    Run r = sh(dir, tool("NHC_RUN") + " r.neff --timing-only --check-races");
    CHECK(r.status == 1);
    CHECK(r.err.find("NHC_ERT019") != std::string::npos);
    CHECK(r.err.find("model/exp") != std::string::npos);
    CHECK(r.err.find("model/store") != std::string::npos);
}

TEST_CASE("--help lists each tool's own options, not LLVM's") {
    ScratchDir scratch;
    const std::string &dir = scratch.path;
    for (const char *t : {"NHC_AS", "NHC_RUN", "NHC_DUMP"}) {
        Run r = sh(dir, tool(t) + " --help");
        CHECK(r.status == 0);
        CHECK(r.out.find("--help") != std::string::npos);
        CHECK(r.out.find("amdgpu") == std::string::npos);
        CHECK(r.out.find("polly") == std::string::npos);
    }
    CHECK(sh(dir, tool("NHC_RUN") + " --help").out.find("--timing-only") != std::string::npos);
}

TEST_CASE("neff-dump shows a partitioned NEFF's manifest and each segment") {
    ScratchDir scratch;
    neff::Program shell;
    shell.name = "two_segments";
    shell.target = "trn1";
    auto bytes_of = [](const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); };
    neff::ArchiveMembers m;
    m["info.json"] = bytes_of(neff::make_info_json(shell));
    m[neff::kPartitionMember] = bytes_of(R"({"inputs": ["x"], "outputs": ["y"], "segments": [
  {"kind": "device", "file": "sg00.neff", "inputs": ["x"], "outputs": ["y"]},
  {"kind": "host", "file": "sg01.onnx", "inputs": ["y"], "outputs": []}]})");
    m["sg00.neff"] = neff::write_neff(neff::parse_program(kAddOne));
    m["sg01.onnx"] = bytes_of("an ONNX model's bytes");
    neff::write_partitioned_neff_file(scratch.path + "/p.neff", shell.name, m);
    Run d = sh(scratch.path, tool("NHC_DUMP") + " p.neff");
    INFO(d.out);
    REQUIRE(d.status == 0);
    for (const char *s : {"; partition.json", "\"kind\": \"host\"", "; segment sg00.neff: device",
                          "x input f32 [128,16]", "name=\"node/Add\"",
                          "; segment sg01.onnx: host, an ONNX model of 21 bytes"})
        CHECK_MESSAGE(d.out.find(s) != std::string::npos, s);
}
