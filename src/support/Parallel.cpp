#include "support/Parallel.h"

#include <llvm/Support/ThreadPool.h>

#include <algorithm>
#include <future>
#include <vector>

namespace nhc {

void for_each_index(size_t n, int jobs, const std::function<void(size_t)> &task) {
    if (jobs <= 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            task(i);
        return;
    }
    llvm::ThreadPool pool(llvm::hardware_concurrency(unsigned(std::min<size_t>(size_t(jobs), n))));
    std::vector<std::shared_future<void>> done;
    for (size_t i = 0; i < n; i++)
        done.push_back(pool.async([&task, i] { task(i); }));
    for (std::shared_future<void> &d : done)
        d.get();
}

} // namespace nhc
