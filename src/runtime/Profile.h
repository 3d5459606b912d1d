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

namespace nhc::rt {

/** {"total_time_us", "mfu", "flops", "dma_bytes", "engines": {"pe": {"busy_us", "busy_fraction",
 *  "instructions"}, ...}, "dma": {...}, "target"} */
std::string summary_json(const Summary &s, const target::TargetInfo &t);
/** Human-readable lines for the terminal. */
std::string summary_text(const Summary &s, const target::TargetInfo &t);
std::string trace_json(const std::vector<TraceEvent> &events, const std::string &model_name);

} // namespace nhc::rt

#endif
