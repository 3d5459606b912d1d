// neff-as: assemble a program in the text form of src/neff/Assembler.h into a NEFF, so that
// NEFFs can be written by hand (tests, benchmarks) before the compiler generates them.
//   neff-as kernel.s -o kernel.neff [--fast-loading]
// Weight variables name their data with `file="w.npy"` (relative to the .s file); a float32 file
// is rounded (RNE) to the variable's dtype.

#include "neff/Assembler.h"
#include "neff/NeffFile.h"
#include "runtime/Numerics.h"
#include "runtime/TensorFiles.h"
#include "support/Error.h"
#include "support/TensorFile.h"

#include <llvm/Support/CommandLine.h>

#include <cstring>
#include <iostream>

namespace cl = llvm::cl;
using namespace nhc;

namespace {

cl::opt<std::string> input(cl::Positional, cl::desc("<kernel.s>"), cl::Required);
cl::opt<std::string> output("o", cl::desc("output NEFF"), cl::value_desc("file.neff"),
                            cl::Required);
cl::opt<bool> fast_loading("fast-loading", cl::desc("write an uncompressed tar payload"));

std::vector<uint8_t> weight_bytes(const neff::Variable &v, const NpyTensor &h,
                                  const std::string &file) {
    int64_t n = 1;
    for (int64_t d : h.shape) {
        n *= d;
    }
    if (n != v.num_elements()) {
        user_error("NHC_EASM006", "weight '", v.name, "' has ", v.num_elements(),
                   " elements, file '", file, "' holds ", n);
    }
    if (rt::holds_bytes_of(h.dtype, v)) { // as neuron-halide-run binds inputs
        return h.data;
    }
    if (h.dtype != "float32") {
        user_error("NHC_EASM006", "weight '", v.name, "' is ",
                   v.holds_bool ? "bool" : neff::dtype_name(v.dtype), ", file '", file, "' holds ",
                   h.dtype, ": expected that dtype or float32");
    }
    std::vector<uint8_t> out(size_t(v.size_bytes()));
    for (int64_t i = 0; i < n; i++) {
        float x;
        std::memcpy(&x, h.data.data() + i * 4, 4);
        rt::store_elem(v.dtype, out.data() + i * neff::dtype_size(v.dtype), x);
    }
    return out;
}

int run() {
    std::vector<uint8_t> text = neff::read_file_bytes(input);
    std::vector<std::pair<std::string, std::string>> files;
    neff::Program p = neff::parse_program(std::string(text.begin(), text.end()), &files);
    std::string dir =
        input.find('/') == std::string::npos ? "." : input.substr(0, input.rfind('/'));
    for (const auto &[name, file] : files) {
        std::string path = file.size() && file[0] == '/' ? file : dir + "/" + file;
        neff::Variable &v = p.vars[size_t(p.var_index(name))];
        v.set_bytes(weight_bytes(v, read_tensor_file(path), path));
    }
    neff::WriteOptions wo;
    wo.compress = !fast_loading;
    neff::validate_program(p);
    neff::write_file_bytes(output, neff::write_neff(p, wo));
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    static cl::OptionCategory options("neff-as options"); // --help without LLVM's own
    input.addCategory(options);
    output.addCategory(options);
    fast_loading.addCategory(options);
    cl::HideUnrelatedOptions(options);
    cl::ParseCommandLineOptions(argc, argv, "assemble a NeuronCore program into a NEFF\n");
    try {
        return run();
    } catch (const UserError &e) {
        std::cerr << "error: " << e.formatted() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "internal error (this is a bug in neff-as): " << e.what() << "\n";
        return 70;
    }
}
