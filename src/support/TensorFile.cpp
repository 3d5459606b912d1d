#include "support/TensorFile.h"

#include "support/Error.h"
#include "support/Files.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>

namespace nhc {

namespace {

std::vector<uint8_t> slurp(const std::string &path) {
    std::vector<uint8_t> bytes;
    if (!read_whole_file(path, &bytes)) {
        user_error("NHC_ERT013", "cannot open tensor file '", path, "'");
    }
    return bytes;
}

/** ONNX TensorProto.DataType -> our dtype name and the typed field that holds it. */
const char *onnx_dtype(int t) {
    switch (t) {
    case onnx::TensorProto::FLOAT:
        return "float32";
    case onnx::TensorProto::FLOAT16:
        return "float16";
    case onnx::TensorProto::BFLOAT16:
        return "bfloat16";
    case onnx::TensorProto::DOUBLE:
        return "float64";
    case onnx::TensorProto::INT8:
        return "int8";
    case onnx::TensorProto::UINT8:
        return "uint8";
    case onnx::TensorProto::INT16:
        return "int16";
    case onnx::TensorProto::UINT16:
        return "uint16";
    case onnx::TensorProto::INT32:
        return "int32";
    case onnx::TensorProto::UINT32:
        return "uint32";
    case onnx::TensorProto::INT64:
        return "int64";
    case onnx::TensorProto::UINT64:
        return "uint64";
    case onnx::TensorProto::BOOL:
        return "bool";
    default:
        return nullptr;
    }
}

template <typename T, typename Field>
void append(std::vector<uint8_t> &out, const Field &f) {
    for (auto v : f) {
        T x = T(v);
        const auto *b = reinterpret_cast<const uint8_t *>(&x);
        out.insert(out.end(), b, b + sizeof x);
    }
}

std::string dims_text(const std::vector<int64_t> &dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); i++)
        s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

NpyTensor parse_pb(const std::vector<uint8_t> &bytes, const std::string &path) {
    onnx::TensorProto p;
    if (!p.ParseFromArray(bytes.data(), int(bytes.size()))) {
        user_error("NHC_ERT013", "'", path, "' is not a serialized onnx TensorProto");
    }
    const char *dt = onnx_dtype(p.data_type());
    if (!dt) {
        user_error("NHC_ERT013", "'", path, "' holds onnx data type ", p.data_type(),
                   ", which the runtime cannot bind");
    }
    NpyTensor t;
    t.dtype = dt;
    t.shape.assign(p.dims().begin(), p.dims().end());
    int size = host_dtype_size(t.dtype);
    std::optional<int64_t> need = tensor_bytes(t.shape, size);
    if (!need) {
        user_error("NHC_ERT013", "'", path, "' has shape ", dims_text(t.shape),
                   ", a negative dimension or more bytes than 64 bits count");
    }
    if (p.has_raw_data()) {
        t.data.assign(p.raw_data().begin(), p.raw_data().end());
    } else if (t.dtype == "float32") {
        append<float>(t.data, p.float_data());
    } else if (t.dtype == "float64") {
        append<double>(t.data, p.double_data());
    } else if (t.dtype == "int64") {
        append<int64_t>(t.data, p.int64_data());
    } else if (t.dtype == "uint64" || t.dtype == "uint32") {
        for (uint64_t v : p.uint64_data()) {
            t.data.insert(t.data.end(), reinterpret_cast<uint8_t *>(&v),
                          reinterpret_cast<uint8_t *>(&v) + size);
        }
    } else {
        // int32_data holds the bit patterns of 8/16/32-bit types (onnx.proto).
        for (int32_t v : p.int32_data()) {
            t.data.insert(t.data.end(), reinterpret_cast<uint8_t *>(&v),
                          reinterpret_cast<uint8_t *>(&v) + size);
        }
    }
    if (int64_t(t.data.size()) != *need) {
        user_error("NHC_ERT013", "'", path, "' has ", t.data.size(),
                   " bytes of data, its shape needs ", *need);
    }
    return t;
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

int onnx_data_type(const std::string &dtype) {
    for (int t = onnx::TensorProto::FLOAT; t <= onnx::TensorProto::BFLOAT16; t++)
        if (const char *name = onnx_dtype(t); name && dtype == name)
            return t;
    return onnx::TensorProto::UNDEFINED;
}

NpyTensor read_tensor_file(const std::string &path) {
    if (ends_with(path, ".npy")) {
        return parse_npy(slurp(path), path);
    }
    if (ends_with(path, ".pb")) {
        return parse_pb(slurp(path), path);
    }
    user_error("NHC_ERT013", "tensor file '", path,
               "' has an unknown extension: expected .npy or .pb");
}

void write_npy_file(const std::string &path, const NpyTensor &t) {
    std::vector<uint8_t> bytes = make_npy(t);
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!f) {
        user_error("NHC_ERT013", "cannot write tensor file '", path, "'");
    }
}

} // namespace nhc
