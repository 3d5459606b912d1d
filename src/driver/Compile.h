#ifndef NHC_DRIVER_COMPILE_H
#define NHC_DRIVER_COMPILE_H

/** \file
 * The compile pipeline as one readable list of named, timed steps (DESIGN.md "The pipeline"):
 * front end, host fallback (driver/HostPartition.h: a model with host segments compiles each
 * device segment on its own), the compile cache (driver/CompileCache.h: a hit ends the compile
 * there), operator support, code generation (groups, schedules, lowering, instruction selection,
 * semaphores), NEFF writing, the NEFF stored in the cache.
 */

#include "driver/Options.h"

namespace nhc {

/** Runs the compile command; throws UserError on a user error. */
void compile_model(const CompileOptions &options);

/** `list-operators`: every ONNX operator (default domain, opset 17) and every operator code
 *  generation supports, one per line, sorted: its name, a tab, and where it runs: `device`;
 *  `host`, computed by the front end when its inputs are constants and in a host segment
 *  otherwise (--fallback host; refused with --fallback none); or `refused` (NHC_EUOC002). */
std::string list_operators_text();

} // namespace nhc

#endif
