#ifndef NHC_DRIVER_COMPILE_H
#define NHC_DRIVER_COMPILE_H

/** \file
 * The compile pipeline as one readable list of named, timed steps (DESIGN.md "The pipeline").
 * Steps that do not exist yet stop the pipeline with NHC_ENYI001, naming the step, so a user sees
 * exactly how far their model got.
 */

#include "driver/Options.h"

namespace nhc {

/** Runs the compile command; throws UserError on a user error. */
void compile_model(const CompileOptions &options);

/** `list-operators`: the supported ONNX operators, one per line. */
std::string list_operators_text();

} // namespace nhc

#endif
