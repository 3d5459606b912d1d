#ifndef NHC_RUNTIME_PARTITION_H
#define NHC_RUNTIME_PARTITION_H

/** \file
 * A partitioned NEFF (host fallback; neff/NeffFile.h, driver/HostPartition.h) as the runtime
 * runs it: its segments in order, each device segment a Model of its own NEFF, each host segment
 * a HostSegment, values passed between them by name in the runtime's types. The manifest,
 * partition.json, is written by the compiler and read here:
 *   {"inputs": [names], "outputs": [names],
 *    "segments": [{"kind": "device"|"host", "file": "sg00.neff", "inputs": [..], "outputs": [..]}]}
 */

#include "runtime/HostSegment.h"
#include "runtime/Runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace nhc::rt {

struct PartitionManifest {
    struct Segment {
        bool on_host = false;
        std::string file;
        std::vector<std::string> inputs, outputs;
    };
    std::vector<std::string> inputs, outputs; ///< the model's, in its order
    std::vector<Segment> segments;
};

std::string partition_json(const PartitionManifest &m);
/** NHC_ENEFF006 when the text is not such a manifest. */
PartitionManifest parse_partition_json(const std::string &text);

struct Partition {
    PartitionManifest manifest;
    /** Per segment: its Model (device) or its HostSegment (host). */
    std::vector<std::unique_ptr<Model>> device;
    std::vector<std::shared_ptr<const HostSegment>> host;
    /** The model's inputs then outputs, typed by the segment that reads or writes each. */
    std::vector<neff::Variable> io;
};

/** Loads every segment of a partitioned NEFF's contents (each device NEFF with `opt`'s checks);
 *  NHC_ENEFF015 when a segment is missing or a value crosses between segments in two types. */
std::unique_ptr<Partition> load_partition(const neff::NeffContents &c, const LoadOptions &opt);

/** Runs the segments in order (see Model::execute for the inputs' checks). The summary adds the
 *  device segments' (their times one after the other) and the host segments' measured time;
 *  the trace holds the device segments' events, each segment after the one before. Host
 *  segments need values: in a timing-only run they are skipped (and not counted). */
ExecResult execute_partition(const Partition &p, const std::map<std::string, Tensor> &inputs,
                             const ExecOptions &opt);

} // namespace nhc::rt

#endif
