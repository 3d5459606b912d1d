#ifndef NHC_RUNTIME_RACEDETECTOR_H
#define NHC_RUNTIME_RACEDETECTOR_H

/** \file
 * Finds data races in a program as the simulator runs it: two accesses to overlapping SBUF, PSUM
 * or HBM bytes, at least one a write, that no chain of semaphores and program order puts one
 * before the other. The simulator's event order may happen to give the right values for such a
 * pair; the hardware's timing need not (issue 14). A race is user error NHC_ERT019 naming both
 * instructions and their ONNX nodes.
 *
 * Happens-before, with vector clocks (one component per compute engine and per DMA queue):
 *  - instructions of one engine are ordered by its stream (the engine runs in order);
 *  - an instruction that waits for semaphore s >= v is ordered after the first v completions that
 *    incremented s, in the order the simulation retired them (exact when one engine or queue
 *    signals s, as every semaphore the compiler emits; with several signallers the order is the
 *    simulated interleaving);
 *  - a DMA transfer is ordered after its issuing instruction (and what that one is ordered after),
 *    but not after the earlier transfers of its queue: they may still be moving data on other DMA
 *    engines. Its completion covers every earlier transfer of its queue, which complete in order
 *    (nc.md:L244).
 * Accesses are compared by their boxes (neff/Footprint.h), then by their bytes: as equally
 * spaced runs in O(1) where both take that form (tiles of rows, column tiles of a tensor), else
 * element by element; so interleaved strided accesses do not overlap. Records that every engine
 * still to run is ordered after, or that an ordered dense write covers, are dropped, so the cost
 * stays near that of the accesses themselves (0.02-0.07 s on the calibration kernels' 40,000 to
 * 100,000 instructions, 3x the timing-only run).
 */

#include "neff/Footprint.h"
#include "neff/Isa.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace nhc::rt {

class RaceDetector {
public:
    explicit RaceDetector(const neff::Program &p);
    ~RaceDetector();

    /** Instruction `index` of engine e issues (its waits hold): acquires what its waits cover,
     *  checks its accesses (or its DMA transfer's) against earlier unordered ones (NHC_ERT019)
     *  and records them. Returns the id of what its completion releases (for on_signal). */
    int64_t on_issue(neff::Engine e, size_t index, const neff::Instr &i);
    /** A completion with release id `release` incremented semaphore `sem`. */
    void on_signal(uint32_t sem, int64_t release);

private:
    struct State;
    std::unique_ptr<State> s_;
};

} // namespace nhc::rt

#endif
