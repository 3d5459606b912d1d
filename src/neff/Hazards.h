#ifndef NHC_NEFF_HAZARDS_H
#define NHC_NEFF_HAZARDS_H

/** \file
 * Which earlier instructions an instruction must follow: the last writer of every region it reads
 * or writes (RAW, WAW) and the readers of every region it overwrites (WAR). Regions are bounding
 * boxes on chip (partitions x bytes) and the exact bytes of a variable in HBM (its rows listed,
 * up to 65,536 of them; a bounding byte range beyond), so that the stores of one tensor's tiles,
 * whose rows interleave, do not depend on each other. Used by the instruction scheduler and by
 * semaphore insertion, which must agree. Each memory's accesses are indexed by byte range, so an
 * instruction is compared only with the accesses it can meet: the dependencies are those of a
 * scan of the whole history (tests/e2e/test_hazards_index.cpp), at a cost that stays near linear
 * in programs of a hundred thousand instructions.
 */

#include "neff/Isa.h"

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace nhc::codegen {

class HazardTracker {
public:
    HazardTracker();
    ~HazardTracker();
    /** The indices of the earlier instructions `ins` depends on (sorted, unique); then records
     *  `ins` as instruction `index`. Call in program order. */
    std::vector<int> add(const neff::Instr &ins, int index);

private:
    struct Access;
    class MemoryHistory;
    MemoryHistory &memory(int space, int var);
    /** Per memory (space, HBM variable): only accesses to one memory can overlap. */
    std::map<std::pair<int, int>, std::unique_ptr<MemoryHistory>> history_;
};

} // namespace nhc::codegen

#endif
