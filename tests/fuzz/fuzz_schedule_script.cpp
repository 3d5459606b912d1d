// Fuzz target: bytes as a schedule script (--schedule), through the parser.

#include "FuzzTarget.h"
#include "schedules/ScheduleScript.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string text(reinterpret_cast<const char *>(data), size);
    nhc::fuzz::expect_user_errors([&] { nhc::sched::parse_schedule(text, "<fuzz>"); });
    return 0;
}
