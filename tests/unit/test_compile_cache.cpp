// The compile cache (driver/CompileCache.h): what its key covers, the folder from the options
// and the environment, and the least recently used entries removed past the limit (entries
// given back, and a corrupt one compiled again: tests/e2e/test_compile_cache.cpp).

#include "TestModels.h"
#include "autoscheduler/TuningDb.h"
#include "driver/CompileCache.h"
#include "driver/Options.h"
#include "neff/NeffFile.h"
#include "support/Error.h"

#include <cstdlib>
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace nhc;
using nhc::test::TempDir;

namespace {

/** A graph of one MatMul by a constant of `rows` x 4 floats (i * 0.5 each). */
Graph matmul_graph(int64_t rows) {
    Graph g;
    g.name = "g";
    g.opset = g.original_opset = 17;
    g.inputs = {"x"};
    g.outputs = {"y"};
    g.values["x"] = Value{"x", DType::Float32, {1, rows}, nullptr};
    auto w = std::make_shared<HostTensor>(DType::Float32, Shape{rows, 4});
    float *data = reinterpret_cast<float *>(w->mutable_bytes().data());
    for (int64_t i = 0; i < rows * 4; i++)
        data[i] = 0.5f * float(i);
    g.values["w"] = Value{"w", DType::Float32, {rows, 4}, w};
    g.values["y"] = Value{"y", DType::Float32, {1, 4}, nullptr};
    Node n;
    n.name = "mm";
    n.op_type = "MatMul";
    n.inputs = {"x", "w"};
    n.outputs = {"y"};
    g.nodes.push_back(n);
    return g;
}

/** The graph with one byte of the weight `w` changed at `offset`. */
Graph with_weight_byte_changed(int64_t rows, size_t offset) {
    Graph g = matmul_graph(rows);
    auto w = std::make_shared<HostTensor>(*g.values["w"].constant);
    w->mutable_bytes()[offset] ^= 1;
    g.values["w"].constant = w;
    return g;
}

/** Sets an environment variable for the scope, restoring it after. */
struct ScopedEnv {
    std::string name;
    std::optional<std::string> old;
    ScopedEnv(const char *n, const char *value) : name(n) {
        if (const char *v = std::getenv(n))
            old = v;
        if (value)
            setenv(n, value, 1);
        else
            unsetenv(n);
    }
    ~ScopedEnv() {
        if (old)
            setenv(name.c_str(), old->c_str(), 1);
        else
            unsetenv(name.c_str());
    }
};

} // namespace

TEST_CASE("the key covers the graph, its weights' bytes and the options that change a NEFF") {
    CompileOptions o;
    const int64_t rows = 1200000; // 19.2 MB: two pieces of the weights' digests
    std::string key = compile_cache_key(matmul_graph(rows), o);
    CHECK(key.size() == 64);
    CHECK(compile_cache_key(matmul_graph(rows), o) == key);
    // A byte of the weight in its first piece or its second.
    CHECK(compile_cache_key(with_weight_byte_changed(rows, 3), o) != key);
    CHECK(compile_cache_key(with_weight_byte_changed(rows, 17u << 20), o) != key);
    Graph renamed = matmul_graph(rows);
    renamed.nodes[0].name = "mm2";
    CHECK(compile_cache_key(renamed, o) != key);
    for (auto change : std::vector<std::function<void(CompileOptions &)>>{
             [](CompileOptions &c) { c.optlevel = 3; },
             [](CompileOptions &c) { c.target = "trn2"; },
             [](CompileOptions &c) { c.model_type = "transformer"; },
             [](CompileOptions &c) { c.auto_cast = "matmult"; },
             [](CompileOptions &c) { c.enable_saturate_infinity = true; },
             [](CompileOptions &c) { c.enable_fast_loading_neuron_binaries = true; }}) {
        CompileOptions other = o;
        change(other);
        CHECK(compile_cache_key(matmul_graph(rows), other) != key);
    }
    // What does not change the NEFF's bytes does not change the key.
    CompileOptions same = o;
    same.output = "elsewhere.neff";
    same.logfile = "other.log";
    same.verbose = 10;
    same.auto_cast_type = "fp16"; // without auto-cast nothing is cast
    for (int jobs : {1, 3}) {
        same.num_parallel_jobs = jobs;
        CHECK(compile_cache_key(matmul_graph(rows), same) == key);
    }
}

TEST_CASE("the build's identity: the compiler's object and the libraries it links, nothing else") {
    std::string id = compiler_build_id();
    INFO(id);
    CHECK(id.rfind("compiler ", 0) == 0);
    CHECK(id.find("compiler sha256") == std::string::npos); // the linker wrote a build id
    CHECK(id.find("libHalide14.so.0 ") != std::string::npos);
    CHECK(id.find("not loaded") == std::string::npos);
    // A library the compiler does not link, loaded into the process (as a Python session loads
    // torch's), does not change it.
    void *other = dlopen("libexpat.so.1", RTLD_NOW);
    REQUIRE(other != nullptr);
    CHECK(compiler_build_id() == id);
    dlclose(other);
}

TEST_CASE("the key covers the text of the --schedule file") {
    TempDir dir;
    CompileOptions o;
    o.schedule_file = dir.file("s.txt");
    std::ofstream(o.schedule_file) << "# one\n";
    std::string one = compile_cache_key(matmul_graph(4), o);
    std::ofstream(o.schedule_file) << "# two\n";
    CHECK(compile_cache_key(matmul_graph(4), o) != one);
}

TEST_CASE("the key covers the tuning database's rows a compile can choose from") {
    TempDir dir;
    std::unique_ptr<autosched::TuningDb> db = autosched::TuningDb::open(dir.file("t.db"), true);
    CompileOptions o;
    o.tuning = db.get();
    std::string empty = compile_cache_key(matmul_graph(4), o);
    autosched::TuningRecord r;
    r.workload_text = "w";
    r.target = "trn1";
    r.plan = "default";
    r.feasible = false; // a refusal: best_plan never chooses it
    db->record(r);
    CHECK(compile_cache_key(matmul_graph(4), o) == empty);
    r.feasible = true;
    r.simulated_ns = 100;
    db->record(r);
    std::string one = compile_cache_key(matmul_graph(4), o);
    CHECK(one != empty);
    r.target = "trn2"; // another target's row
    db->record(r);
    CHECK(compile_cache_key(matmul_graph(4), o) == one);
}

TEST_CASE("past the limit, the entries used least recently are removed, and old temporaries") {
    TempDir dir;
    std::string neff = dir.file("a.neff");
    neff::write_neff_file(neff, neff::Program{}); // an entry needs only to be an intact NEFF
    uint64_t size = std::filesystem::file_size(neff);
    std::string cache = dir.file("cache");
    auto key = [](char c) { return std::string(64, c); };
    store_cached_neff(cache, key('a'), neff);
    store_cached_neff(cache, key('b'), neff);
    // 'a' is used after 'b' was stored, so 'b' is the least recent when 'c' makes three.
    std::filesystem::last_write_time(cache + "/" + key('b') + ".neff",
                                     std::filesystem::file_time_type::clock::now() -
                                         std::chrono::hours(1));
    REQUIRE(fetch_cached_neff(cache, key('a'), dir.file("out.neff")));
    // A killed compile's temporary file: removed once a day old, not before.
    std::string old_tmp = cache + "/" + key('d') + ".neff.tmp.1.2";
    std::string new_tmp = cache + "/" + key('e') + ".neff.tmp.1.2";
    std::ofstream(old_tmp) << "x";
    std::ofstream(new_tmp) << "x";
    std::filesystem::last_write_time(old_tmp, std::filesystem::file_time_type::clock::now() -
                                                  std::chrono::hours(25));
    store_cached_neff(cache, key('c'), neff, /*limit_bytes=*/2 * size);
    std::vector<std::filesystem::path> kept = nhc::test::sorted_entries(cache);
    CHECK_FALSE(std::filesystem::exists(old_tmp));
    REQUIRE(std::filesystem::exists(new_tmp));
    std::filesystem::remove(new_tmp);
    kept = nhc::test::sorted_entries(cache);
    REQUIRE(kept.size() == 2);
    CHECK(kept[0].filename() == key('a') + ".neff");
    CHECK(kept[1].filename() == key('c') + ".neff");
}

TEST_CASE("the cache folder: --cache-dir, --no-cache, then the environment") {
    auto parse = [](std::vector<const char *> args) {
        args.insert(args.begin(), {"neuron-halide-cc", "compile", "m.onnx"});
        return parse_command_line(static_cast<int>(args.size()), args.data()).options.cache_dir;
    };
    ScopedEnv no_disable("NEURON_HALIDE_CACHE_DISABLE", nullptr);
    ScopedEnv no_dir("NEURON_HALIDE_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    ScopedEnv home("HOME", "/home/u");
    CHECK(parse({}) == "/x/cache/neuron-halide");
    CHECK(parse({"--no-cache"}) == "");
    CHECK(parse({"--cache-dir", "/c"}) == "/c");
    {
        ScopedEnv unset_xdg("XDG_CACHE_HOME", nullptr);
        CHECK(parse({}) == "/home/u/.cache/neuron-halide");
    }
    {
        ScopedEnv dir("NEURON_HALIDE_CACHE_DIR", "/shared/cache");
        CHECK(parse({}) == "/shared/cache");
    }
    {
        ScopedEnv off("NEURON_HALIDE_CACHE_DISABLE", "1");
        CHECK(parse({}) == "");
        CHECK(parse({"--cache-dir", "/c"}) == "/c"); // the command line wins
    }
    {
        ScopedEnv on("NEURON_HALIDE_CACHE_DISABLE", "0");
        CHECK(parse({}) == "/x/cache/neuron-halide");
    }
    for (std::vector<const char *> bad :
         {std::vector<const char *>{"--cache-dir", "/c", "--no-cache"},
          std::vector<const char *>{"--cache-dir="}}) {
        try {
            parse(bad);
            FAIL("expected NHC_EARG002");
        } catch (const UserError &e) {
            CHECK(e.code() == "NHC_EARG002");
        }
    }
}
