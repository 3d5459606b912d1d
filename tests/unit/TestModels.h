#ifndef NHC_TESTS_TESTMODELS_H
#define NHC_TESTS_TESTMODELS_H

// Small ONNX models for tests, written in ONNX's textual syntax (onnx/defs/parser.h).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace nhc::test {

inline onnx::ModelProto parse_model(const std::string &text) {
    onnx::ModelProto model;
    onnx::OnnxParser parser(text.c_str());
    auto status = parser.Parse(model);
    if (!status.IsOK())
        throw std::runtime_error("test model does not parse: " + status.ErrorMessage());
    return model;
}

/** A fresh folder under the system temp dir, removed at scope exit. */
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("nhc_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string &name) const { return (path / name).string(); }
};

/** The paths in folder `dir`, sorted. */
inline std::vector<std::filesystem::path> sorted_entries(const std::string &dir) {
    std::vector<std::filesystem::path> found;
    for (const auto &e : std::filesystem::directory_iterator(dir))
        found.push_back(e.path());
    std::sort(found.begin(), found.end());
    return found;
}

inline std::string write_model(const onnx::ModelProto &model, const std::string &path) {
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
    return path;
}

} // namespace nhc::test

#endif
