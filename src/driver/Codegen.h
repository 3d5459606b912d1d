#ifndef NHC_DRIVER_CODEGEN_H
#define NHC_DRIVER_CODEGEN_H

/** \file
 * From the Graph IR to a NeuronCore program (DESIGN.md §2, §6): memory planning in HBM (graph
 * inputs and outputs, weights with their bytes, one scratch variable per intermediate; view
 * operators alias their input), one group per node (algorithm, default schedule, Halide lowering,
 * instruction selection), then semaphores across the whole program.
 */

#include "driver/GraphPasses.h"
#include "driver/Options.h"
#include "graph/Graph.h"
#include "neff/Isa.h"

namespace nhc {

/** Operators the code generator takes end to end (registered with OperatorSupport). */
void register_codegen_operators();

neff::Program generate_program(const Graph &g, const CompileOptions &options);
/** The same program, consuming `g`: once the groups are compiled, the graph lets go of its
 *  constants (the program's weights hold the bytes they need), so that each weight laid out in
 *  load order (neff/TileWeights.h) frees the bytes it was made from and the next one can reuse
 *  that memory: the weights are held once, not twice, and the NEFF's bytes are the same. */
neff::Program generate_program(Graph &&g, const CompileOptions &options);

} // namespace nhc

#endif
