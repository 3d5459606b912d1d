#include "frontend/LoadModel.h"

#include "frontend/WeightsInPlace.h"
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
std::shared_ptr<const MappedFile> map_model_file(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        user_error("NHC_EIO001", "model file '", path, "' does not exist");
    if (std::filesystem::is_directory(path, ec))
        user_error("NHC_EIO001", "model file '", path, "' is a directory; expected a file");
    // Refused before mapping (and MAP_POPULATE reading) gigabytes it cannot parse.
    if (std::filesystem::is_regular_file(path, ec))
        refuse_over_protobuf_limit(path, std::filesystem::file_size(path, ec));
    auto file = std::make_shared<const MappedFile>(path);
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

/** The ONNX external_data keys of `t`: location, offset, length (-1: to the end). */
struct ExternalKeys {
    std::string location;
    int64_t offset = 0, length = -1;
};

ExternalKeys external_keys(const onnx::TensorProto &t) {
    ExternalKeys k;
    for (const auto &kv : t.external_data()) {
        try {
            if (kv.key() == "location")
                k.location = kv.value();
            else if (kv.key() == "offset")
                k.offset = std::stoll(kv.value());
            else if (kv.key() == "length")
                k.length = std::stoll(kv.value());
        } catch (const std::exception &) {
            user_error("NHC_EONX005", "external data of tensor '", t.name(), "' has key '",
                       kv.key(), "' with value '", kv.value(), "'; expected an integer");
        }
    }
    if (k.location.empty())
        user_error("NHC_EONX005", "tensor '", t.name(),
                   "' is stored externally but has no 'location' key");
    return k;
}

/** The external-data files of a model, each mapped once. */
class ExternalFiles {
public:
    explicit ExternalFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}

    /** Where external tensor `t`'s bytes are, checked: a file inside the model's directory,
     *  a range inside that file. */
    MappedBytes bytes_of(const onnx::TensorProto &t) {
        ExternalKeys k = external_keys(t);
        std::filesystem::path file = confined_location(t.name(), k.location, dir_);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(file, ec))
            user_error("NHC_EONX005", "external data file '", file.string(), "' of tensor '",
                       t.name(), "' does not exist; keep it beside the model file");
        std::shared_ptr<const MappedFile> &mapped = files_[std::filesystem::canonical(file, ec)];
        if (!mapped)
            mapped = std::make_shared<const MappedFile>(file.string());
        if (!mapped->ok())
            user_error("NHC_EIO001", "cannot read external data file '", file.string(), "'");
        int64_t size = int64_t(mapped->size());
        int64_t length = k.length < 0 ? size - k.offset : k.length;
        if (k.offset < 0 || length < 0 || k.offset > size || length > size - k.offset)
            user_error("NHC_EONX005", "external data of tensor '", t.name(), "' asks for bytes [",
                       k.offset, ", ", k.offset + length, ") of '", file.string(), "', which has ",
                       size, " bytes");
        return {mapped, size_t(k.offset), size_t(length)};
    }

private:
    std::filesystem::path dir_;
    std::map<std::filesystem::path, std::shared_ptr<const MappedFile>> files_;
};

const char *chars_of(const MappedBytes &b) {
    return reinterpret_cast<const char *>(b.file->data()) + b.offset;
}

/** Makes `t` say its bytes are `b`: no data of its own, EXTERNAL at the file's absolute path. */
void point_at(onnx::TensorProto &t, const MappedBytes &b, const std::string &absolute_path) {
    t.clear_raw_data();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto &[key, value] :
         {std::pair<const char *, std::string>{"location", absolute_path},
          {"offset", std::to_string(b.offset)},
          {"length", std::to_string(b.size)}}) {
        onnx::StringStringEntryProto *e = t.add_external_data();
        e->set_key(key);
        e->set_value(value);
    }
}

/** Makes `t` hold a copy of `b` as its raw data. */
void copy_in(onnx::TensorProto &t, const MappedBytes &b) {
    t.set_raw_data(std::string(chars_of(b), b.size));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
}

void inline_tensor(onnx::TensorProto &t, ExternalFiles &files) {
    copy_in(t, files.bytes_of(t));
}

void inline_graph(onnx::GraphProto &g, ExternalFiles &files, bool initializers) {
    if (initializers)
        for (onnx::TensorProto &t : *g.mutable_initializer())
            if (t.data_location() == onnx::TensorProto::EXTERNAL)
                inline_tensor(t, files);
    for (onnx::NodeProto &n : *g.mutable_node())
        for (onnx::AttributeProto &a : *n.mutable_attribute()) {
            if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL)
                inline_tensor(*a.mutable_t(), files);
            if (a.has_g())
                inline_graph(*a.mutable_g(), files, true);
            for (onnx::GraphProto &sub : *a.mutable_graphs())
                inline_graph(sub, files, true);
        }
}

/** The absolute path ONNX's checker finds `file` at, whatever the working directory. */
std::string absolute_path(const MappedFile &file) {
    std::error_code ec;
    return std::filesystem::canonical(file.path(), ec).string();
}

/** True when `t` holds no data of its own and says nothing of where it is. */
bool holds_no_data(const onnx::TensorProto &t) {
    return t.data_location() != onnx::TensorProto::EXTERNAL && !t.has_raw_data() &&
           t.float_data_size() == 0 && t.int32_data_size() == 0 && t.string_data_size() == 0 &&
           t.int64_data_size() == 0 && t.double_data_size() == 0 && t.uint64_data_size() == 0;
}

/** Records initializer `t`'s bytes `b` as staying in place, unless an initializer of its name
 *  already does (then its bytes are copied in: each name must find its own bytes). */
void keep_in_place(LoadedModel &m, onnx::TensorProto &t, const MappedBytes &b) {
    if (m.in_place.emplace(t.name(), b).second) {
        point_at(t, b, absolute_path(*b.file));
        return;
    }
    copy_in(t, b);
}

/** Initializers' raw data of this size or more stays in the model file. Small ones are decoded
 *  as before: shape inference reads the data of small constant operands (a Reshape's shape),
 *  which it cannot from external data; no such operand comes near this size. */
constexpr size_t kMinBytesInPlace = 64 << 10;

} // namespace

void inline_external_data(onnx::ModelProto &model, const std::string &model_dir) {
    ExternalFiles files(model_dir);
    inline_graph(*model.mutable_graph(), files, true);
}

HostTensor LoadedModel::initializer(const onnx::TensorProto &t) const {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
        return HostTensor::from_onnx(t, t.name());
    auto it = in_place.find(t.name());
    nhc_assert(it != in_place.end(), "initializer '" << t.name() << "' has no bytes");
    const MappedBytes &b = it->second;
    return HostTensor::from_onnx(t, t.name(), ByteView(b.file->data() + b.offset, b.size), b.file);
}

void LoadedModel::reattach_in_place() {
    for (onnx::TensorProto &t : *proto.mutable_graph()->mutable_initializer())
        if (auto it = in_place.find(t.name()); it != in_place.end() && holds_no_data(t))
            point_at(t, it->second, absolute_path(*it->second.file));
}

LoadedModel load_model_file(const std::string &path) {
    std::shared_ptr<const MappedFile> file = map_model_file(path);
    if (file->size() == 0)
        user_error("NHC_EONX001", "model file '", path, "' is empty; expected an ONNX model");
    refuse_over_protobuf_limit(path, file->size()); // a pipe's size is known only once read
    std::optional<WeightsInPlace> weights;
    if (file->mapped())
        weights = find_weights_in_place({file->data(), file->size()}, kMinBytesInPlace);
    LoadedModel m;
    bool parsed = weights ? m.proto.ParseFromString(weights->stripped)
                          : m.proto.ParseFromArray(file->data(), int(file->size()));
    if (!parsed)
        user_error("NHC_EONX001", "model file '", path, "' (", file->size(),
                   " bytes) is not a valid ONNX protobuf; it may be truncated or corrupted");
    if (!m.proto.has_graph())
        user_error("NHC_EONX001", "model file '", path,
                   "' parses as protobuf but holds no graph; expected an ONNX ModelProto");
    log_debug("read ", file->size(), " bytes from ", path);
    onnx::GraphProto &graph = *m.proto.mutable_graph();
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    ExternalFiles files(dir.empty() ? "." : dir);
    for (onnx::TensorProto &t : *graph.mutable_initializer())
        if (t.data_location() == onnx::TensorProto::EXTERNAL)
            keep_in_place(m, t, files.bytes_of(t));
    if (weights)
        for (const RawDataInPlace &w : weights->weights) {
            nhc_assert(w.initializer < size_t(graph.initializer_size()),
                       "initializer out of range");
            keep_in_place(m, *graph.mutable_initializer(int(w.initializer)),
                          {file, w.offset, w.size});
        }
    inline_graph(graph, files, false);
    return m;
}

} // namespace nhc
