#include "support/MallocTunables.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>

namespace nhc {

void reexec_with_malloc_tunables(char **argv) {
    // 32 MiB: the largest mmap threshold glibc takes on 64-bit (HEAP_MAX_SIZE / 2); 1 TiB: a trim
    // threshold no compile reaches.
    constexpr const char *kTunable = "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
                                     "glibc.malloc.trim_threshold=1099511627776";
    if (std::getenv("NHC_DEFAULT_MALLOC"))
        return;
    // A copy: setenv may free the string getenv pointed to.
    const char *given = std::getenv("GLIBC_TUNABLES");
    const std::optional<std::string> original =
        given ? std::optional<std::string>(given) : std::nullopt;
    std::string value = original.value_or("");
    if (value.find("glibc.malloc.hugetlb") != std::string::npos)
        return; // set by the user, or by the re-execution: never loops
    value += value.empty() ? kTunable : std::string(":") + kTunable;
    if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    // Only reached if execv failed (no /proc, say): go on as we are, with the variable restored
    // so that children see what the user gave.
    if (original)
        setenv("GLIBC_TUNABLES", original->c_str(), 1);
    else
        unsetenv("GLIBC_TUNABLES");
}

} // namespace nhc
