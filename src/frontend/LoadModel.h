#ifndef NHC_FRONTEND_LOADMODEL_H
#define NHC_FRONTEND_LOADMODEL_H

/** \file
 * Reads an ONNX model file into a ModelProto, leaving the weights where the files hold them. The
 * main graph's initializers whose raw data is large (frontend/WeightsInPlace), and those stored
 * as ONNX external data (files beside the model: `external_data` location/offset/length keys),
 * keep their bytes in the mapped file: their TensorProtos carry no data and say EXTERNAL, with
 * the file's absolute path as location (so that the ONNX checker finds it), and the loaded model
 * lists them by name; every later step reads an initializer through LoadedModel::initializer,
 * which views those bytes. External data of Constant nodes and subgraphs is inlined as raw_data.
 * The files stay mapped while a tensor views them: they must not change during a compile.
 *
 * Assumes nothing about the file: unreadable, truncated or non-protobuf content is a user error
 * (NHC_EIO001, NHC_EONX001, NHC_EONX005), and an external data location that leaves the model's
 * directory (absolute, through "..", or by a symbolic link) is refused before any file is opened
 * (NHC_EONX009).
 */

#include "graph/HostTensor.h"
#include "support/Files.h"

#include <map>
#include <memory>
#include <onnx/onnx_pb.h>
#include <string>

namespace nhc {

/** Bytes of a mapped file, which the shared pointer keeps mapped. */
struct MappedBytes {
    std::shared_ptr<const MappedFile> file;
    size_t offset = 0, size = 0;
};

struct LoadedModel {
    onnx::ModelProto proto;
    /** The main graph's initializers whose bytes stay in a mapped file, by name. */
    std::map<std::string, MappedBytes> in_place;

    /** Initializer `t` of the main graph: a view of its bytes where they stay, else decoded. */
    HostTensor initializer(const onnx::TensorProto &t) const;
    /** Points the initializers that stay in place but hold no data at their bytes again: ONNX's
     *  version converter rebuilds the graph through its IR, which keeps an external tensor's
     *  type and dims but drops where its bytes are. */
    void reattach_in_place();
};

LoadedModel load_model_file(const std::string &path);

/** Inlines external data of initializers and Constant-node tensors; `model_dir` is the folder
 *  the locations are relative to. Exposed for tests. */
void inline_external_data(onnx::ModelProto &model, const std::string &model_dir);

} // namespace nhc

#endif
