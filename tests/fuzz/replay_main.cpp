// Runs a fuzz target once on each input it is given: files, or folders of files (sorted, so that
// the order is the same on every machine). CI replays the committed corpus with it. Exits 1 at the
// first input that lets anything but a coded user error out of the target, naming the input (a
// crash names it too: the name is printed before the input runs).
//
// usage: <target>_replay FILE_OR_DIR...

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; i++) {
        if (fs::is_directory(argv[i])) {
            for (const auto &e : fs::directory_iterator(argv[i]))
                if (e.is_regular_file())
                    inputs.push_back(e.path());
        } else {
            inputs.emplace_back(argv[i]);
        }
    }
    std::sort(inputs.begin(), inputs.end());
    if (inputs.empty()) {
        std::cerr << "no inputs to replay\n";
        return 1;
    }
    for (const fs::path &p : inputs) {
        std::ifstream in(p, std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::cerr << p.string() << ": cannot be read\n";
            return 1;
        }
        std::cerr << "replay " << p.string() << "\n";
        try {
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        } catch (const std::exception &e) {
            std::cerr << p.string() << ": finding: " << e.what() << "\n";
            return 1;
        }
    }
    std::cout << inputs.size() << " inputs replayed, no finding\n";
    return 0;
}
