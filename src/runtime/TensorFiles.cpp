#include "runtime/TensorFiles.h"

#include "runtime/Numerics.h"
#include "support/Error.h"

#include <cstring>

namespace nhc::rt {

namespace {

/** "int64 [2,3]" */
std::string describe(const std::string &dtype, const std::vector<int64_t> &shape) {
    return dtype + " " + shape_str(shape);
}

/** NHC_ERT003: the file's type and shape, and what input `var` takes. */
[[noreturn]] void refuse(const NpyTensor &file, const neff::Variable &var) {
    user_error("NHC_ERT003", "input '", var.name, "' is ", describe(file.dtype, file.shape),
               ": expected ", var.holds_bool ? "bool" : neff::dtype_numpy_name(var.dtype), " ",
               shape_str(var.shape));
}

/** int64 values narrowed to the int32 the NEFF holds them as; each must fit. */
std::vector<uint8_t> narrowed_int64(const NpyTensor &file, const neff::Variable &var) {
    std::vector<uint8_t> out;
    out.reserve(file.data.size() / 2);
    for (size_t i = 0; i + 8 <= file.data.size(); i += 8) {
        int64_t v;
        std::memcpy(&v, file.data.data() + i, 8);
        if (v < INT32_MIN || v > INT32_MAX)
            user_error("NHC_ERT003", "input '", var.name, "' holds ", v,
                       ", which does not fit the int32 the NEFF takes");
        int32_t w = static_cast<int32_t>(v);
        const uint8_t *b = reinterpret_cast<const uint8_t *>(&w);
        out.insert(out.end(), b, b + 4);
    }
    return out;
}

} // namespace

bool holds_bytes_of(const std::string &file_dtype, const neff::Variable &var) {
    if (var.holds_bool)
        return file_dtype == "bool";
    return file_dtype == neff::dtype_numpy_name(var.dtype) ||
           (file_dtype == "uint16" && var.dtype == neff::DType::BF16);
}

Tensor input_from_file(const NpyTensor &file, const neff::Variable &var) {
    Tensor t;
    t.dtype = var.dtype;
    t.shape = file.shape;
    if (file.dtype == "int64" && var.dtype == neff::DType::I32) {
        t.data = narrowed_int64(file, var);
    } else if (!holds_bytes_of(file.dtype, var)) {
        refuse(file, var);
    } else {
        if (var.holds_bool)
            for (uint8_t b : file.data)
                if (b > 1)
                    user_error("NHC_ERT003", "input '", var.name, "' is bool but holds the byte ",
                               int(b), "; expected 0 or 1");
        t.data = file.data;
    }
    if (t.shape != var.shape)
        refuse(file, var);
    return t;
}

Tensor input_from_file(const NpyTensor &file, const Model &model, const std::string &name) {
    const neff::Program &p = model.program();
    int v = p.var_index(name);
    if (v < 0 || p.vars[size_t(v)].kind != neff::VarKind::Input) {
        user_error("NHC_ERT002", "unknown input '", name, "': model '", p.name,
                   "' has no input of that name");
    }
    return input_from_file(file, p.vars[size_t(v)]);
}

NpyTensor output_for_file(const Tensor &t, const Model &model, const std::string &name) {
    const neff::Program &p = model.program();
    return output_for_file(t, p.vars.at(size_t(p.var_index(name))));
}

NpyTensor output_for_file(const Tensor &t, const neff::Variable &var) {
    NpyTensor h;
    h.shape = t.shape;
    if (var.holds_bool) {
        h.dtype = "bool";
        h.data = t.data;
        return h;
    }
    const char *np = neff::dtype_numpy_name(t.dtype);
    if (host_dtype_size(np) == neff::dtype_size(t.dtype) && t.dtype != neff::DType::BF16) {
        h.dtype = np;
        h.data = t.data;
        return h;
    }
    h.dtype = "float32";
    size_t es = size_t(neff::dtype_size(t.dtype)), n = t.data.size() / es;
    h.data.resize(n * 4);
    for (size_t i = 0; i < n; i++) {
        float v = load_elem(t.dtype, t.data.data() + i * es);
        std::memcpy(h.data.data() + i * 4, &v, 4);
    }
    return h;
}

} // namespace nhc::rt
