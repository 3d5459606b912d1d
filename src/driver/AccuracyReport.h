#ifndef NHC_DRIVER_ACCURACYREPORT_H
#define NHC_DRIVER_ACCURACYREPORT_H

/** \file
 * --accuracy-report (issue 18): what an auto-cast costs in accuracy. After the NEFF is written,
 * the model is compiled a second time without auto-cast (a reference NEFF in a temporary
 * folder, removed afterwards), both NEFFs run on the simulator, functionally, on the same
 * inputs, and each output's error against the reference is printed: the largest absolute
 * difference and the relative L2 norm of the difference.
 *
 * The inputs are made, not given: floats from a fixed-seed generator, uniform in [-1, 1);
 * integers and bools 0 (an index every Gather accepts, a mask that masks nothing out). So the
 * report is the same on every run, and measures the cast on data of unit scale, not on a
 * user's own data. Assumes the NEFF at `options.output` was just written.
 */

#include "driver/Options.h"

#include <string>

namespace nhc {

/** Compiles the reference, runs both and prints the report to standard output. With
 *  --auto-cast none there is nothing to compare: says so. */
void report_accuracy(const CompileOptions &options);

} // namespace nhc

#endif
