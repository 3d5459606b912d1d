#ifndef NHC_RUNTIME_SIMULATOR_H
#define NHC_RUNTIME_SIMULATOR_H

/** \file
 * The timed execution of a program: one in-order queue per engine (PE, ACT, DVE, Pool, SP) and
 * the DMA engines, synchronised by semaphores (neuroncore.md §1.4 "Sequencers", §2.3).
 *
 * Model:
 *  - An instruction starts when its engine is free, all its waits (semaphore >= value) hold and
 *    the ports it shares with another engine are free (NC-v2: VectorE/GpSimdE on SBUF,
 *    VectorE/ScalarE on PSUM; NC-v3: VectorE/ScalarE within a PSUM bank); it occupies its engine
 *    (and those ports) for the target's cost formula (CostModel.h), plus the dependent overhead
 *    when it waited on a semaphore or reads what the previous instruction of its engine wrote;
 *    at completion it adds 1 to its signal semaphore. Semaphores start at 0.
 *  - A DMA instruction occupies its issuing engine for dma.issue_ns (an indirect one, Pool, also
 *    for generating its descriptors: target::swdge_descriptor_ns); the transfer then waits the
 *    fixed latency, follows the previous transfer of its queue in order (and the in-flight limit
 *    when one is configured), and is split over DMA engines, each busy for its bytes over its
 *    bandwidth and no less than its HBM bytes over its share of the core's HBM bandwidth. It
 *    signals when its last engine finishes, and never before the previous transfer of its queue.
 *  - The functional effect of an instruction happens when it is issued, in simulated-time order
 *    (ties broken by engine order), so a correctly synchronised program computes the same values
 *    as in any other interleaving, and a racy one is deterministic. In timing-only mode
 *    (Machine::functional() false) instructions are checked and timed but compute nothing.
 *  - The constants and the calibration against published Trn1 times: docs/timing.md.
 *  - When no engine can issue and no completion is pending, the program is deadlocked: user
 *    error NHC_ERT007 listing every blocked instruction and the semaphore values.
 *  - With SimOptions::check_races, a RaceDetector follows the run and stops it at the first
 *    pair of accesses that no semaphore orders (NHC_ERT019).
 */

#include "runtime/Exec.h"
#include "runtime/Machine.h"

#include <string>
#include <vector>

namespace nhc::rt {

/** One executed instruction (or DMA transfer) on a track, for traces. */
struct TraceEvent {
    std::string track; ///< "pe", "act", "dve", "pool", "sp", "dma q3"
    std::string name;  ///< opcode, plus the source name when the instruction has one
    size_t index = 0;  ///< index in its engine stream
    double start_ns = 0, end_ns = 0;
    int64_t bytes = 0;
};

/** What a run measured. */
struct Summary {
    double total_ns = 0;
    double busy_ns[neff::kNumEngines] = {};
    int64_t instructions[neff::kNumEngines] = {};
    double dma_busy_ns = 0; ///< summed over DMA engines
    int dma_engines = 0;
    int64_t dma_bytes = 0;
    int64_t dma_transfers = 0;
    double flops = 0;
    double ideal_pe_ns = 0; ///< sum of flops / dtype peak over matmuls
    /** A partitioned NEFF's host segments (runtime/HostSegment.h): nodes run on the CPU and
     *  their wall-clock time on this machine, measured, not simulated (total_ns is the device
     *  segments' simulated time alone). */
    int host_nodes = 0;
    double host_ns = 0;
    double mfu() const { return total_ns > 0 ? ideal_pe_ns / total_ns : 0; }
    double busy_fraction(neff::Engine e) const {
        return total_ns > 0 ? busy_ns[int(e)] / total_ns : 0;
    }
    double dma_busy_fraction() const {
        return total_ns > 0 && dma_engines > 0 ? dma_busy_ns / (total_ns * dma_engines) : 0;
    }
};

struct SimOptions {
    bool trace = false;
    /** Report unsynchronised accesses to the same bytes as NHC_ERT019 (RaceDetector.h). */
    bool check_races = false;
};

struct SimResult {
    Summary summary;
    std::vector<TraceEvent> trace;
};

/** Runs every engine stream of m's program to completion. */
SimResult simulate(Machine &m, const SimOptions &opt = {});

} // namespace nhc::rt

#endif
