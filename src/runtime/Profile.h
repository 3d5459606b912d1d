#ifndef NHC_RUNTIME_PROFILE_H
#define NHC_RUNTIME_PROFILE_H

/** \file
 * Reports of a simulated run: the summary JSON of `neuron-halide-run --summary-json` and a
 * Chrome / Perfetto trace (the "JSON Array/Object" trace-event format: one process, one thread per
 * engine and per DMA queue, complete events "X" in microseconds). Output is deterministic: tracks
 * and events are sorted.
 */

#include "runtime/Simulator.h"
#include "target/Target.h"

#include <string>
#include <vector>

namespace nhc::rt {

/** {"total_time_us", "mfu", "flops", "dma_bytes", "engines": {"pe": {"busy_us", "busy_fraction",
 *  "instructions"}, ...}, "dma": {...}, "target"} */
std::string summary_json(const Summary &s, const target::TargetInfo &t);
/** Human-readable lines for the terminal. */
std::string summary_text(const Summary &s, const target::TargetInfo &t);
std::string trace_json(const std::vector<TraceEvent> &events, const std::string &model_name);

/** The tracks of a trace in the order a profile shows them: every engine in its fixed order,
 *  then the DMA queues the run used, by number. */
std::vector<std::string> trace_tracks(const std::vector<TraceEvent> &events);

/** The group of ONNX nodes an instruction belongs to: the source name after its opcode, or
 *  "(unnamed)". */
std::string group_name(const TraceEvent &e);

/** Where the time goes, per source name (a group of ONNX nodes: its instructions carry the
 *  group's name): each group's "adds", the time from the previous group's end to its own in the
 *  order the groups finish, which sums to the latency; its span and each engine's busy time in
 *  it, and its DMA queues' time. The `rows` largest adds, largest first, then one line for the
 *  rest. */
struct ProfileRow {
    std::string group;
    double adds_ns = 0, start_ns = 0, end_ns = 0, dma_queue_ns = 0;
    double busy_ns[neff::kNumEngines] = {};
};
std::vector<ProfileRow> profile_rows(const std::vector<TraceEvent> &events);
std::string profile_table(const std::vector<TraceEvent> &events, size_t rows);

} // namespace nhc::rt

#endif
