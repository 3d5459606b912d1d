#ifndef NHC_DRIVER_COMPILECACHE_H
#define NHC_DRIVER_COMPILECACHE_H

/** \file
 * The compile cache (issue 18): a NEFF compiled before from the same graph, with the same
 * options, by the same compiler build, is given back without compiling, as neuronx-cc's framework
 * wrapper keys its cache on the graph, the flags and the compiler version (neuron-compiler.md
 * §1.6; its cache left flags out of the key and users got stale NEFFs, §6 item 11).
 *
 * The key is the SHA-256 of: the build ids (the linker's NT_GNU_BUILD_ID note, which changes with
 * any change of code) of the object holding the compiler and of the libraries it links
 * (compiler_build_id);
 * the graph the front end made (every value's name, type, shape and bytes, every node's fields
 * and attributes: the model file's own bytes, doc strings, producer or field order do not
 * matter, and --input-shape and --freeze-input do, through the graph they make); the options
 * that change the NEFF's bytes, the --schedule file's text among them; and the --tuning-db rows
 * a compile could choose from. The NEFF's bytes depend on nothing else (a compile is
 * deterministic, whatever --num-parallel-jobs), so an entry is the NEFF itself, `<key>.neff`.
 *
 * Entries are written to a temporary file beside them and renamed, so a concurrent compile of
 * the same model never sees a torn entry; a hit is copied the same way and checked as it is
 * given out (the NEFF header's size and payload SHA-256, neff::check_neff_file_hash): a corrupt
 * entry is removed, said in a warning, and the model compiled again. The cache never fails a
 * compile: a folder that cannot be made or written is a warning. Past kCacheLimitBytes the
 * entries used least recently (a hit renews an entry's time) are removed after a store, and the
 * temporary files of killed compiles once a day old.
 */

#include "driver/Options.h"
#include "graph/Graph.h"

#include <string>

namespace nhc {

/** Where the cache lives unless --cache-dir says: $NEURON_HALIDE_CACHE_DIR, else
 *  $XDG_CACHE_HOME/neuron-halide, else $HOME/.cache/neuron-halide; "" (no cache) when the
 *  environment has none of them or NEURON_HALIDE_CACHE_DISABLE is set to anything but 0 (as
 *  ccache's CCACHE_DISABLE). */
std::string default_cache_dir();

/** What identifies this build: the build id of the object holding the compiler (the executable,
 *  or the Python extension) and those of the libraries it names as needed (Halide, LLVM, ONNX,
 *  protobuf, ...), as loaded; not the other libraries of the process, which a Python session may
 *  have loaded or not. An object without a build id stands for its file's SHA-256. */
std::string compiler_build_id();

/** The cache key (64 hex digits) of compiling `graph`, as the front end made it, with `options`
 *  (options.tuning: the opened --tuning-db, or null). */
std::string compile_cache_key(const Graph &graph, const CompileOptions &options);

/** One segment of a model compiled with host fallback (driver/HostPartition.h) as the cache
 *  keys it: a device segment's graph as the front end made it, or a host segment's ONNX model
 *  bytes as the partitioned NEFF holds them. */
struct KeyedSegment {
    const Graph *device_graph = nullptr;
    std::string host_onnx;
};

/** The cache key of a model compiled in segments: the options, the partition's manifest (the
 *  segments' order, files and interfaces: runtime/Partition.h's partition.json), the model's
 *  name, and each segment. */
std::string partitioned_cache_key(const std::string &manifest_json, const std::string &model_name,
                                  const std::vector<KeyedSegment> &segments,
                                  const CompileOptions &options);

/** Writes the entry `key` of cache folder `dir` to `output` when there is one and it is intact
 *  (true); false when there is none, or it is corrupt (removed, with a warning). */
bool fetch_cached_neff(const std::string &dir, const std::string &key, const std::string &output);

/** The cache's size past which the least recently used entries are removed (a policy, not a
 *  hardware figure: about forty BERT-base NEFFs). */
constexpr uint64_t kCacheLimitBytes = uint64_t(8) << 30;

/** Stores the NEFF at `neff_path` as entry `key`, then removes the entries used least recently
 *  while the folder's entries hold more than `limit_bytes`; a failure is a warning. */
void store_cached_neff(const std::string &dir, const std::string &key, const std::string &neff_path,
                       uint64_t limit_bytes = kCacheLimitBytes);

} // namespace nhc

#endif
