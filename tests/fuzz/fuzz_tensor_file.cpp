// Fuzz target: bytes as a tensor file (--input, --freeze-input), read as .npy when they start
// with NumPy's magic and as a serialized ONNX TensorProto (.pb) otherwise, so that the fuzzer
// reaches both readers by changing the first bytes.

#include "FuzzTarget.h"
#include "support/TensorFile.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bool npy = size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0;
    static const nhc::fuzz::ScratchFile npy_file(".npy"), pb_file(".pb");
    const std::string &path = (npy ? npy_file : pb_file).write(data, size);
    nhc::fuzz::expect_user_errors([&] { nhc::read_tensor_file(path); });
    return 0;
}
