// Tensor files from strangers (--input, --freeze-input): shapes whose element or byte counts do
// not fit 64 bits, or that are negative, are refused with NHC_ERT013 before anything is sized by
// them (issue 19; the first two found by tests/fuzz's tensor-file target).

#include "TestModels.h"
#include "support/Error.h"
#include "support/TensorFile.h"

#include <doctest/doctest.h>
#include <fstream>
#include <onnx/onnx_pb.h>

using namespace nhc;
using nhc::test::TempDir;

namespace {

/** A version 1.0 .npy file of float32 with the shape text `shape` and `data_bytes` bytes. */
std::string npy_file(const TempDir &dir, const std::string &shape, size_t data_bytes) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header.resize(118, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) +
                        char(header.size() >> 8) + header + std::string(data_bytes, '\0');
    std::string path = dir.file("t.npy");
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::string code_of(const std::string &path) {
    try {
        read_tensor_file(path);
    } catch (const UserError &e) {
        return e.code() + ": " + e.what();
    }
    return "read";
}

} // namespace

TEST_CASE(".npy shapes past 64 bits are refused, not wrapped") {
    TempDir dir;
    CHECK(code_of(npy_file(dir, "(2, 3)", 24)) == "read");
    std::string past = code_of(npy_file(dir, "(99999999999999999999,)", 0));
    CHECK(past.rfind("NHC_ERT013", 0) == 0);
    CHECK(past.find("past 64 bits") != std::string::npos);
    // 2^32 * 2^32 * 4 bytes wraps to 0 in 64 bits: it must not match an empty data part.
    std::string wraps = code_of(npy_file(dir, "(4294967296, 4294967296)", 0));
    CHECK(wraps.rfind("NHC_ERT013", 0) == 0);
    CHECK(wraps.find("more bytes than 64 bits count") != std::string::npos);
}

TEST_CASE(".pb tensors with a negative dimension or a wrapping count are refused") {
    TempDir dir;
    auto pb = [&](std::vector<int64_t> dims) {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims)
            t.add_dims(d);
        std::string path = dir.file("t.pb");
        std::ofstream(path, std::ios::binary) << t.SerializeAsString();
        return code_of(path);
    };
    CHECK(pb({0}) == "read");
    for (const std::vector<int64_t> &dims :
         {std::vector<int64_t>{-1}, {-2, -3}, {int64_t(1) << 32, int64_t(1) << 32}}) {
        std::string e = pb(dims);
        CHECK(e.rfind("NHC_ERT013", 0) == 0);
        CHECK(e.find("a negative dimension or more bytes than 64 bits count") != std::string::npos);
    }
}
