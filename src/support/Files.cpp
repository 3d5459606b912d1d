#include "support/Files.h"

#include <fstream>

namespace nhc {

bool read_whole_file(const std::string &path, std::vector<uint8_t> *out) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return false;
    std::streamoff size = in.tellg();
    if (size < 0)
        return false;
    out->assign(static_cast<size_t>(size), 0);
    in.seekg(0);
    in.read(reinterpret_cast<char *>(out->data()), std::streamsize(size));
    return bool(in);
}

} // namespace nhc
