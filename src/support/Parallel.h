#ifndef NHC_SUPPORT_PARALLEL_H
#define NHC_SUPPORT_PARALLEL_H

/** \file
 * Independent tasks on several threads (--num-parallel-jobs): an llvm::ThreadPool, as
 * DESIGN.md asks for parallel compilation. Callers keep results by index, so what they produce
 * does not depend on the number of threads.
 */

#include <cstddef>
#include <functional>

namespace nhc {

/** Runs task(i) for every i below n, on up to `jobs` threads (1: in this thread). An exception a
 *  task throws surfaces here, in this thread. */
void for_each_index(size_t n, int jobs, const std::function<void(size_t)> &task);

} // namespace nhc

#endif
