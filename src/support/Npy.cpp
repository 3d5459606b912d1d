#include "support/Npy.h"

#include "support/Error.h"

#include <cstring>

namespace nhc {

namespace {

struct DescrRow {
    const char *descr; ///< without the byte-order character
    const char *dtype;
    int size;
};

// NumPy type strings. bfloat16 has no NumPy type; ml_dtypes writes it as a 2-byte void ("V2").
const DescrRow kDescrs[] = {
    {"f4", "float32", 4}, {"f2", "float16", 2}, {"f8", "float64", 8}, {"V2", "bfloat16", 2},
    {"i1", "int8", 1},    {"u1", "uint8", 1},   {"i2", "int16", 2},   {"u2", "uint16", 2},
    {"i4", "int32", 4},   {"u4", "uint32", 4},  {"i8", "int64", 8},   {"u8", "uint64", 8},
    {"b1", "bool", 1},
};

[[noreturn]] void bad(const std::string &what, const std::string &msg) {
    user_error("NHC_ERT013", "'", what, "' is not a readable .npy file: ", msg);
}

/** Value of 'key' in the header dict text, up to the next ',' at depth 0 or the closing '}'. */
std::string dict_value(const std::string &h, const std::string &key, const std::string &what) {
    size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) {
        bad(what, "header has no '" + key + "'");
    }
    size_t c = h.find(':', k);
    size_t i = c + 1, depth = 0;
    std::string v;
    for (; i < h.size(); i++) {
        char ch = h[i];
        if (ch == '(' || ch == '[') {
            depth++;
        } else if (ch == ')' || ch == ']') {
            depth--;
        } else if ((ch == ',' || ch == '}') && depth == 0) {
            break;
        }
        v += ch;
    }
    size_t b = v.find_first_not_of(" "), e = v.find_last_not_of(" ");
    return b == std::string::npos ? "" : v.substr(b, e - b + 1);
}

} // namespace

int host_dtype_size(const std::string &dtype) {
    for (const auto &r : kDescrs) {
        if (dtype == r.dtype) {
            return r.size;
        }
    }
    return 0;
}

NpyTensor parse_npy(const std::vector<uint8_t> &b, const std::string &what) {
    if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) {
        bad(what, "missing the \\x93NUMPY magic");
    }
    int major = b[6];
    size_t hlen_size = major == 1 ? 2 : 4;
    if (major < 1 || major > 3 || b.size() < 8 + hlen_size) {
        bad(what, "unsupported format version " + std::to_string(major));
    }
    uint32_t hlen = 0;
    std::memcpy(&hlen, b.data() + 8, hlen_size);
    size_t data_off = 8 + hlen_size + hlen;
    if (b.size() < data_off) {
        bad(what, "truncated header");
    }
    std::string h(reinterpret_cast<const char *>(b.data()) + 8 + hlen_size, hlen);
    NpyTensor t;
    std::string descr = dict_value(h, "descr", what);
    if (descr.size() < 4 || (descr[1] != '<' && descr[1] != '|')) {
        bad(what, "descr " + descr + " is not a little-endian numeric type");
    }
    std::string code = descr.substr(2, descr.size() - 3);
    t.dtype.clear();
    for (const auto &r : kDescrs) {
        t.dtype = code == r.descr ? r.dtype : t.dtype;
    }
    if (t.dtype.empty()) {
        bad(what, "unsupported descr " + descr);
    }
    if (dict_value(h, "fortran_order", what) != "False") {
        bad(what, "fortran_order arrays are not supported");
    }
    std::string shape = dict_value(h, "shape", what);
    for (size_t i = 0; i < shape.size();) {
        if (std::isdigit((unsigned char)shape[i])) {
            size_t e = i;
            try {
                t.shape.push_back(std::stoll(shape.substr(i), &e));
            } catch (const std::exception &) {
                bad(what, "shape " + shape + " has a dimension past 64 bits");
            }
            i += e;
        } else {
            i++;
        }
    }
    std::optional<int64_t> need = tensor_bytes(t.shape, host_dtype_size(t.dtype));
    if (!need)
        bad(what, "shape " + shape + " has more bytes than 64 bits count");
    size_t bytes = size_t(*need);
    if (b.size() - data_off != bytes) {
        bad(what, "data has " + std::to_string(b.size() - data_off) + " bytes, shape needs " +
                      std::to_string(bytes));
    }
    t.data.assign(b.begin() + long(data_off), b.end());
    return t;
}

std::optional<int64_t> tensor_bytes(const std::vector<int64_t> &shape, int elem_size) {
    int64_t n = elem_size;
    for (int64_t d : shape)
        if (d < 0 || __builtin_mul_overflow(n, d, &n))
            return std::nullopt;
    return n;
}

std::vector<uint8_t> make_npy(const NpyTensor &t) {
    std::string descr;
    for (const auto &r : kDescrs) {
        if (t.dtype == r.dtype) {
            descr = std::string(r.size == 1 ? "|" : "<") + r.descr;
        }
    }
    nhc_assert(!descr.empty(), "no .npy descr for dtype " << t.dtype);
    std::string shape = "(";
    for (size_t i = 0; i < t.shape.size(); i++) {
        shape += std::to_string(t.shape[i]) +
                 (t.shape.size() == 1 ? "," : (i + 1 < t.shape.size() ? ", " : ""));
    }
    shape += ")";
    std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Pad so that the data starts on a 64-byte boundary (format spec), ending with '\n'.
    size_t total = 10 + h.size() + 1;
    h += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    uint16_t hlen = uint16_t(h.size());
    out.push_back(uint8_t(hlen & 0xff));
    out.push_back(uint8_t(hlen >> 8));
    out.insert(out.end(), h.begin(), h.end());
    out.insert(out.end(), t.data.begin(), t.data.end());
    return out;
}

} // namespace nhc
