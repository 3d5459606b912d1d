#ifndef NHC_DRIVER_COMPILE_H
#define NHC_DRIVER_COMPILE_H

/** \file
 * The compile pipeline as one readable list of named, timed steps (DESIGN.md "The pipeline"):
 * front end, the compile cache (driver/CompileCache.h: a hit ends the compile there), operator
 * support, code generation (groups, schedules, lowering, instruction selection, semaphores),
 * NEFF writing, the NEFF stored in the cache.
 */

#include "driver/Options.h"

namespace nhc {

/** Runs the compile command; throws UserError on a user error. */
void compile_model(const CompileOptions &options);

/** `list-operators`: every ONNX operator (default domain, opset 17) and every operator code
 *  generation supports, one per line, sorted: its name, a tab, and where it runs: `device`;
 *  `folded`, computed by the front end when its inputs are constants (refused otherwise); or
 *  `refused` (NHC_EUOC002; there is no host fallback yet). */
std::string list_operators_text();

} // namespace nhc

#endif
