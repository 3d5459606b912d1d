// The compile cache (driver/CompileCache.h) through compile_model: a hit gives the entry's
// bytes without compiling, a corrupt entry is removed and the model compiled again, and a cache
// folder that cannot be made does not fail the compile.

#include "../unit/TestModels.h"
#include "driver/Compile.h"
#include "driver/CompileCache.h"
#include "support/Log.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>

using namespace nhc;
using nhc::test::TempDir;

namespace {

std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CompileOptions cached_compile(const TempDir &dir, const std::string &output) {
    CompileOptions o;
    o.model_path = std::string(NHC_SOURCE_DIR) + "/examples/mlp/model.onnx";
    o.output = dir.file(output);
    o.cache_dir = dir.file("cache");
    return o;
}

} // namespace

TEST_CASE("a second compile is a hit, byte for byte; a corrupt entry is compiled again") {
    TempDir dir;
    CompileOptions first = cached_compile(dir, "a.neff");
    compile_model(first);
    std::vector<std::filesystem::path> stored = nhc::test::sorted_entries(first.cache_dir);
    REQUIRE(stored.size() == 1);
    CHECK(stored[0].extension() == ".neff");
    CHECK(read_bytes(stored[0]) == read_bytes(first.output));

    compile_model(cached_compile(dir, "b.neff"));
    CHECK(read_bytes(dir.file("b.neff")) == read_bytes(first.output));
    // The entry is what a hit gives: another intact NEFF in its place comes out instead.
    CompileOptions plain = cached_compile(dir, "plain.neff");
    plain.cache_dir.clear();
    plain.enable_fast_loading_neuron_binaries = true; // the same program, not compressed
    compile_model(plain);
    REQUIRE(read_bytes(plain.output) != read_bytes(first.output));
    std::filesystem::copy_file(plain.output, stored[0],
                               std::filesystem::copy_options::overwrite_existing);
    compile_model(cached_compile(dir, "hit.neff"));
    CHECK(read_bytes(dir.file("hit.neff")) == read_bytes(plain.output));
    std::filesystem::copy_file(first.output, stored[0],
                               std::filesystem::copy_options::overwrite_existing);

    // One byte of the payload flipped: the entry is not given out, but compiled again.
    {
        std::fstream f(stored[0], std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(3000);
        char c = 0;
        f.read(&c, 1);
        f.seekp(3000);
        c ^= 0x40;
        f.write(&c, 1);
    }
    REQUIRE(read_bytes(stored[0]) != read_bytes(first.output));
    CompileOptions third = cached_compile(dir, "c.neff");
    CHECK_FALSE(fetch_cached_neff(third.cache_dir, stored[0].stem().string(), third.output));
    CHECK_FALSE(std::filesystem::exists(stored[0])); // removed
    CHECK_FALSE(std::filesystem::exists(third.output));
    compile_model(third);
    CHECK(read_bytes(third.output) == read_bytes(first.output));
    CHECK(read_bytes(stored[0]) == read_bytes(first.output)); // stored again
    // Nothing half-written stays behind.
    CHECK(nhc::test::sorted_entries(first.cache_dir).size() == 1);
}

TEST_CASE("a cache folder that cannot be made does not fail the compile") {
    TempDir dir;
    std::ofstream(dir.file("cache")) << "a file where the folder should be";
    CompileOptions o = cached_compile(dir, "a.neff");
    compile_model(o);
    CHECK(std::filesystem::file_size(o.output) > 0);
}
