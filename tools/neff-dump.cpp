// neff-dump: print a NEFF's header, info.json, variables and the disassembly of every engine
// stream (in the assembly syntax of src/neff/Assembler.h, so the output can be fed to neff-as);
// of a partitioned NEFF (host fallback), its manifest and every device segment's.
// Exit status: 0, or 1 with a coded message when the file is not a valid NEFF.

#include "neff/Assembler.h"
#include "neff/NeffFile.h"
#include "support/Error.h"

#include <llvm/Support/CommandLine.h>

#include <iostream>

namespace cl = llvm::cl;
using namespace nhc;

namespace {

cl::opt<std::string> neff_path(cl::Positional, cl::desc("<model.neff>"), cl::Required);

void print_header(const neff::NeffHeader &h, bool compressed) {
    std::cout << "; header\n"
              << ";   pkg_version         " << h.pkg_version << "\n"
              << ";   header_size         " << h.header_size << "\n"
              << ";   data_size           " << h.data_size << (compressed ? " (tar.gz)" : " (tar)")
              << "\n"
              << ";   neff_version        " << h.neff_version_major << "." << h.neff_version_minor
              << "\n"
              << ";   build               " << h.build_version << "\n"
              << ";   num_tpb             " << h.num_tpb << "\n"
              << ";   hash (sha256)       " << neff::hex(h.hash.data(), h.hash.size()) << "\n"
              << ";   uuid                " << neff::hex(h.uuid.data(), h.uuid.size()) << "\n"
              << ";   name                " << h.name << "\n"
              << ";   requested_tpb_count " << h.requested_tpb_count << "\n"
              << ";   feature_bits        " << h.feature_bits << "\n"
              << ";   lnc_size            " << h.lnc_size << "\n";
}

void print_vars(const neff::Program &p) {
    std::cout << "; variables (name kind dtype shape bytes hbm_offset)\n";
    for (const auto &v : p.vars) {
        std::cout << ";   " << v.name << " " << neff::var_kind_name(v.kind) << " "
                  << neff::dtype_name(v.dtype) << " [";
        for (size_t i = 0; i < v.shape.size(); i++) {
            std::cout << (i ? "," : "") << v.shape[i];
        }
        std::cout << "] " << v.size_bytes() << " @" << v.hbm_offset << "\n";
    }
}

/** `text` as comment lines under a `; title` line. */
void print_comment_block(const std::string &title, const std::string &text) {
    std::cout << "; " << title << "\n";
    std::string line;
    for (char ch : text) {
        if (ch == '\n') {
            std::cout << ";   " << line << "\n";
            line.clear();
        } else {
            line += ch;
        }
    }
    if (!line.empty()) // a last line without its newline
        std::cout << ";   " << line << "\n";
}

/** A partitioned NEFF (host fallback): its manifest, then each device segment dumped as a NEFF
 *  of its own and the size of each host segment's ONNX model. */
void print_segments(const neff::NeffContents &c) {
    print_comment_block(neff::kPartitionMember, c.partition_json);
    for (const auto &[file, bytes] : c.segment_files) {
        if (file.size() < 5 || file.substr(file.size() - 5) != ".neff") {
            std::cout << "; segment " << file << ": host, an ONNX model of " << bytes.size()
                      << " bytes\n";
            continue;
        }
        std::cout << "; segment " << file << ": device\n";
        neff::NeffContents seg = neff::read_neff(bytes);
        print_vars(seg.program);
        std::cout << neff::print_program(seg.program);
    }
}

} // namespace

int main(int argc, char **argv) {
    static cl::OptionCategory options("neff-dump options"); // --help without LLVM's own
    neff_path.addCategory(options);
    cl::HideUnrelatedOptions(options);
    cl::ParseCommandLineOptions(argc, argv, "dump a NEFF: header, variables, disassembly\n");
    try {
        neff::NeffContents c = neff::read_neff(neff::read_file_bytes(neff_path));
        print_header(c.header, c.compressed);
        print_comment_block("info.json", c.info_json);
        if (!c.partition_json.empty()) {
            print_segments(c);
            return 0;
        }
        print_vars(c.program);
        std::cout << neff::print_program(c.program);
        return 0;
    } catch (const UserError &e) {
        std::cerr << "error: " << e.formatted() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "internal error (this is a bug in neff-dump): " << e.what() << "\n";
        return 70;
    }
}
