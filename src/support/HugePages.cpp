#include "support/HugePages.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>

namespace nhc {

void reexec_with_huge_pages(char **argv) {
    constexpr const char *kTunable = "glibc.malloc.hugetlb=1";
    if (std::getenv("NHC_NO_HUGE_PAGES"))
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
