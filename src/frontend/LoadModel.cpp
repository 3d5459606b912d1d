#include "frontend/LoadModel.h"

#include "support/Error.h"
#include "support/Files.h"
#include "support/Log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

namespace nhc {

namespace {

/** A single-file model is one protobuf, which holds at most 2 GiB. */
void refuse_over_protobuf_limit(const std::string &path, uint64_t size) {
    if (size > uint64_t(INT32_MAX))
        user_error("NHC_EONX001", "model file '", path, "' has ", size,
                   " bytes; a protobuf holds at most 2 GiB, so larger models keep their weights "
                   "as ONNX external data beside the model");
}

/** The model file, mapped (support/Files.h). */
std::unique_ptr<MappedFile> map_model_file(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        user_error("NHC_EIO001", "model file '", path, "' does not exist");
    if (std::filesystem::is_directory(path, ec))
        user_error("NHC_EIO001", "model file '", path, "' is a directory; expected a file");
    // Refused before mapping (and MAP_POPULATE reading) gigabytes it cannot parse.
    if (std::filesystem::is_regular_file(path, ec))
        refuse_over_protobuf_limit(path, std::filesystem::file_size(path, ec));
    auto file = std::make_unique<MappedFile>(path);
    if (!file->ok())
        user_error("NHC_EIO001", "model file '", path, "' cannot be opened for reading");
    return file;
}

/** The file `location` names for tensor `tensor`, which must stay inside the model's directory
 *  `dir`: a relative path without "..", and no symbolic link on it leading out (a model from a
 *  stranger must not read other files: ONNX 1.12 itself had this hole, CVE-2022-25882). */
std::filesystem::path confined_location(const std::string &tensor, const std::string &location,
                                        const std::filesystem::path &dir) {
    std::filesystem::path rel(location);
    bool climbs = std::any_of(rel.begin(), rel.end(), [](const auto &c) { return c == ".."; });
    auto refuse = [&](const char *why) {
        user_error("NHC_EONX009", "external data of tensor '", tensor, "' is at '", location, "', ",
                   why, "; expected a file inside the model's directory '", dir.string(), "'");
    };
    if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
        refuse("an absolute path");
    if (climbs)
        refuse("a path through '..'");
    std::filesystem::path file = dir / rel;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return file; // reported as missing by the caller (NHC_EONX005)
    std::filesystem::path real_dir = std::filesystem::canonical(dir, ec);
    std::filesystem::path real_file = std::filesystem::canonical(file, ec);
    auto inside =
        std::mismatch(real_dir.begin(), real_dir.end(), real_file.begin(), real_file.end());
    if (ec || inside.first != real_dir.end())
        refuse("a symbolic link leading out of the model's directory");
    return file;
}

// Resolves one tensor stored outside the model file into raw_data.
void inline_tensor(onnx::TensorProto &t, const std::filesystem::path &dir) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : t.external_data()) {
        try {
            if (kv.key() == "location")
                location = kv.value();
            else if (kv.key() == "offset")
                offset = std::stoll(kv.value());
            else if (kv.key() == "length")
                length = std::stoll(kv.value());
        } catch (const std::exception &) {
            user_error("NHC_EONX005", "external data of tensor '", t.name(), "' has key '",
                       kv.key(), "' with value '", kv.value(), "'; expected an integer");
        }
    }
    if (location.empty())
        user_error("NHC_EONX005", "tensor '", t.name(),
                   "' is stored externally but has no 'location' key");
    std::filesystem::path file = confined_location(t.name(), location, dir);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        user_error("NHC_EONX005", "external data file '", file.string(), "' of tensor '", t.name(),
                   "' does not exist; keep it beside the model file");
    int64_t size = static_cast<int64_t>(std::filesystem::file_size(file, ec));
    if (length < 0)
        length = size - offset;
    if (offset < 0 || length < 0 || offset + length > size)
        user_error("NHC_EONX005", "external data of tensor '", t.name(), "' asks for bytes [",
                   offset, ", ", offset + length, ") of '", file.string(), "', which has ", size,
                   " bytes");
    std::ifstream in(file, std::ios::binary);
    std::string bytes(static_cast<size_t>(length), '\0');
    in.seekg(offset);
    in.read(bytes.data(), length);
    if (!in)
        user_error("NHC_EIO001", "cannot read external data file '", file.string(), "'");
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
}

void inline_graph(onnx::GraphProto &g, const std::filesystem::path &dir) {
    for (onnx::TensorProto &t : *g.mutable_initializer())
        if (t.data_location() == onnx::TensorProto::EXTERNAL)
            inline_tensor(t, dir);
    for (onnx::NodeProto &n : *g.mutable_node())
        for (onnx::AttributeProto &a : *n.mutable_attribute()) {
            if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL)
                inline_tensor(*a.mutable_t(), dir);
            if (a.has_g())
                inline_graph(*a.mutable_g(), dir);
            for (onnx::GraphProto &sub : *a.mutable_graphs())
                inline_graph(sub, dir);
        }
}

} // namespace

void inline_external_data(onnx::ModelProto &model, const std::string &model_dir) {
    inline_graph(*model.mutable_graph(), model_dir);
}

onnx::ModelProto load_model_file(const std::string &path) {
    std::unique_ptr<MappedFile> file = map_model_file(path);
    const MappedFile &bytes = *file;
    onnx::ModelProto model;
    if (bytes.size() == 0)
        user_error("NHC_EONX001", "model file '", path, "' is empty; expected an ONNX model");
    refuse_over_protobuf_limit(path, bytes.size()); // a pipe's size is known only once read
    if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
        user_error("NHC_EONX001", "model file '", path, "' (", bytes.size(),
                   " bytes) is not a valid ONNX protobuf; it may be truncated or corrupted");
    if (!model.has_graph())
        user_error("NHC_EONX001", "model file '", path,
                   "' parses as protobuf but holds no graph; expected an ONNX ModelProto");
    log_debug("read ", bytes.size(), " bytes from ", path);
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    inline_external_data(model, dir.empty() ? "." : dir.string());
    return model;
}

} // namespace nhc
