#ifndef NHC_RUNTIME_PROFILEREPORT_H
#define NHC_RUNTIME_PROFILEREPORT_H

/** \file
 * The profile folder of `neuron-halide-run --profile-dir DIR` (issue 18), for a person asking
 * where a model's time goes:
 *   trace.json    the Chrome / Perfetto trace (Profile.h's trace_json)
 *   timeline.svg  one lane per engine and per DMA queue, each instruction a bar coloured by its
 *                 group of ONNX nodes, the critical path in a lane of its own and marked in black
 *                 under its bars
 *   nodes.md, nodes.json  one row per group of ONNX nodes (the nodes fused into one group share
 *                 it), sorted by time: the time it adds to the latency (Profile.h's "adds", so
 *                 the rows sum to the latency), its share, its busiest engine and what bounds it
 * It reads only the trace of a run (TraceEvent): instruction times per engine and queue, and the
 * group name each instruction carries. The picture is TimelineSvg.h's.
 */

#include "runtime/Simulator.h"

#include <string>
#include <vector>

namespace nhc::rt {

struct NodeTimeRow {
    std::string group;              ///< the group's name: its ONNX nodes joined by '+'
    std::vector<std::string> nodes; ///< those nodes
    double time_ns = 0;             ///< what it adds to the latency (ProfileRow::adds_ns)
    double span_ns = 0;             ///< from its first instruction's start to its last's end
    /** The engine most busy with its instructions, or "dma" when its transfers took longer (their
     *  time in their queues). */
    std::string engine;
    /** What holds the time it adds, [end - time, end), judged on every instruction running
     *  then, whatever its group: "compute" when an engine is busy at least half of it, and at
     *  least as long as some DMA transfer is in flight; "dma" when transfers are in flight at
     *  least half of it, and longer than any engine is busy; else "dependency": the engines
     *  and the DMA mostly wait; "-" when it adds nothing. */
    std::string bound;
};

/** The rows, largest time first, and a row "(after the last instruction)" if the latency
 *  `total_ns` ends after the trace's last instruction: the times sum to total_ns. */
std::vector<NodeTimeRow> node_time_rows(const std::vector<TraceEvent> &events, double total_ns);
std::string node_table_markdown(const std::vector<NodeTimeRow> &rows, double total_ns);
std::string node_table_json(const std::vector<NodeTimeRow> &rows, double total_ns);

/** Writes the folder's four files (the folder made if missing); NHC_ERT011 when a file cannot
 *  be written. */
void write_profile_dir(const std::string &dir, const std::vector<TraceEvent> &events,
                       double total_ns, const std::string &model_name);

} // namespace nhc::rt

#endif
