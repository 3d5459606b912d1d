#ifndef NHC_TESTS_FUZZ_FUZZTARGET_H
#define NHC_TESTS_FUZZ_FUZZTARGET_H

/** \file
 * What the fuzz targets share. Each target is one libFuzzer entry point
 * (`LLVMFuzzerTestOneInput`, llvm.org/docs/LibFuzzer.html) that feeds its bytes to one reader of
 * files from strangers. A coded user error is the expected answer to bad bytes; anything else
 * that leaves the target (an internal error, another exception, a crash, a sanitizer report) is
 * a finding. Built two ways (tests/fuzz/meson.build): linked with replay_main.cpp, which runs
 * files or folders of inputs once each (CI replays the committed corpus so), or with
 * `-fsanitize=fuzzer` for a fuzzing session (bench/fuzz.sh).
 */

#include "support/Error.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace nhc::fuzz {

/** This process's scratch file with extension `ext`, removed when the process exits. */
class ScratchFile {
public:
    explicit ScratchFile(const std::string &ext)
        : path_((std::filesystem::temp_directory_path() /
                 ("nhc_fuzz_" + std::to_string(getpid()) + ext))
                    .string()) {}
    ~ScratchFile() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    /** Writes `data` to the file (the readers take paths) and returns its path. */
    const std::string &write(const uint8_t *data, size_t size) const {
        std::ofstream(path_, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char *>(data), std::streamsize(size));
        return path_;
    }

private:
    std::string path_;
};

/** Runs `f`; a UserError (bad input, refused with its code) is the expected way out. */
template <typename F>
void expect_user_errors(F &&f) {
    try {
        f();
    } catch (const UserError &) {
    }
}

} // namespace nhc::fuzz

#endif
