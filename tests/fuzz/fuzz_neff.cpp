// Fuzz target: bytes as a NEFF, loaded by the runtime without its weights and run in
// timing-only mode with race detection under an instruction budget (what neuron-halide-run
// --timing-only --max-instructions does with a NEFF from a stranger). The header's hash is set
// to the payload's before loading: a NEFF whose hash disagrees is refused at once (a test says
// so), and the fuzzer is to reach what lies behind it. The corpus NEFFs are plain tar
// (--enable-fast-loading-neuron-binaries) but one, so that mutations reach the archive's members
// rather than a gzip stream's checksum.

#include "FuzzTarget.h"
#include "neff/NeffFile.h"
#include "neff/Sha256.h"
#include "runtime/Runtime.h"

#include <algorithm>
#include <map>
#include <memory>

namespace {
/** Enough for every corpus NEFF; a larger program is refused (NHC_ERT022) before it runs. */
constexpr int64_t kInstructionBudget = 20000;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace nhc;
    std::vector<uint8_t> neff(data, data + size);
    fuzz::expect_user_errors([&] {
        if (neff.size() >= neff::kHeaderSize) {
            neff::NeffHeader h = neff::decode_header(neff.data());
            h.hash = neff::sha256(neff.data() + neff::kHeaderSize, neff.size() - neff::kHeaderSize);
            std::array<uint8_t, neff::kHeaderSize> header = neff::encode_header(h);
            std::copy(header.begin(), header.end(), neff.begin());
        }
        std::unique_ptr<rt::Model> model;
        rt::LoadOptions lo;
        lo.timing_only = true;
        if (!rt::nrt_load(neff, lo, model).ok())
            return;
        rt::ExecOptions eo;
        eo.timing_only = true;
        eo.check_races = true;
        eo.max_instructions = kInstructionBudget;
        rt::ExecResult res;
        rt::nrt_execute(*model, {}, eo, res);
    });
    return 0;
}
