#ifndef NHC_RUNTIME_TIMELINESVG_H
#define NHC_RUNTIME_TIMELINESVG_H

/** \file
 * The timeline picture of a run (`neuron-halide-run --profile-dir`, ProfileReport.h), an SVG a
 * browser shows: one lane per engine (all of them, idle or not) and per DMA queue the run used,
 * each instruction a bar coloured by its group of ONNX nodes (the colours of the twelve largest
 * named in a legend), a time axis in microseconds, and the critical path (critical_path) in a
 * lane of its own and as a black mark under its bars. Bars of one group closer than half a pixel
 * on a lane are drawn as one (GPT-2 s1024's 64,014 instructions: 8,289 shapes). Each lane's
 * background is a `<rect class="lane" data-lane="NAME">`, for tests that look at the rendered
 * picture.
 */

#include "runtime/Simulator.h"

#include <string>
#include <vector>

namespace nhc::rt {

/** Indices into `events` of the critical path, last first: from the instruction that ends last,
 *  each step goes to the instruction on any lane whose end is the latest at or before its
 *  start (what it started after: the engine's previous instruction or what it waited for; the
 *  trace holds no dependences, so this is the chain a run without slack would follow). */
std::vector<size_t> critical_path(const std::vector<TraceEvent> &events);

std::string timeline_svg(const std::vector<TraceEvent> &events, double total_ns,
                         const std::string &model_name);

} // namespace nhc::rt

#endif
