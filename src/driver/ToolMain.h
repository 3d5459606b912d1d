#ifndef NHC_DRIVER_TOOLMAIN_H
#define NHC_DRIVER_TOOLMAIN_H

/** \file
 * What the compiling tools (neuron-halide-cc, neuron-halide-tune) share around their work: the
 * console level and log file of the options, and the exit protocol. A user error is logged with
 * its code and exits 1; any other exception (an internal error, Halide's, bad_alloc) is logged
 * as a bug and exits 70 (EX_SOFTWARE), never a crash; once compiling has begun, the tool ends
 * with `<what> status PASS` or `<what> status ERROR` on stdout, as neuronx-cc does.
 */

#include "driver/Options.h"

#include <functional>
#include <string>

namespace nhc {

/** Sets the console level and opens the log file of `o` (NHC_EIO002 if it cannot be written). */
void start_logging(const CompileOptions &o);

/** Runs `body` (which sets `started` when compiling begins and returns the exit status) under
 *  the exit protocol above; `what` names the status line ("Compiler", "Tuning"). */
int run_compiler_tool(const std::string &what, const std::function<int(bool &started)> &body);

} // namespace nhc

#endif
