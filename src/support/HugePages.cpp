#include "support/HugePages.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace nhc {

void reexec_with_huge_pages(char **argv) {
    constexpr const char *kTunable = "glibc.malloc.hugetlb=1";
    if (std::getenv("NHC_NO_HUGE_PAGES"))
        return;
    const char *tunables = std::getenv("GLIBC_TUNABLES");
    std::string value = tunables ? tunables : "";
    if (value.find("glibc.malloc.hugetlb") != std::string::npos)
        return; // set by the user, or by the re-execution: never loops
    value += value.empty() ? kTunable : std::string(":") + kTunable;
    if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    // Only reached if execv failed (no /proc, say): go on as we are, with the variable restored
    // so that children see what the user gave.
    if (tunables)
        setenv("GLIBC_TUNABLES", tunables, 1);
    else
        unsetenv("GLIBC_TUNABLES");
}

} // namespace nhc
