/** \file
 * Printing half of the assembler (Assembler.h): programs, instructions and access patterns in
 * their canonical text form.
 */
#include "neff/Assembler.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace nhc::neff {

namespace {

// ---- printing ----

std::string fmt_float(float f) {
    if (std::isnan(f)) {
        return "nan";
    }
    if (std::isinf(f)) {
        return f > 0 ? "inf" : "-inf";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(f));
    return buf;
}

std::string quote(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

std::string print_dims(const AccessPattern &ap) {
    std::ostringstream os;
    os << "[";
    bool first = true;
    if (ap.space == MemSpace::HBM) {
        os << "[" << ap.partition_step << "," << ap.num_partitions << "]";
        first = false;
    }
    for (const auto &d : ap.dims) {
        os << (first ? "" : ",") << "[" << d.step << "," << d.num << "]";
        first = false;
    }
    os << "]";
    return os.str();
}

std::string print_scalar(const Scalar &s, const Program &p) {
    return s.is_ap ? print_access_pattern(s.ap, p) : fmt_float(s.imm);
}

std::string print_affine(const Affine &a) {
    std::ostringstream os;
    os << "[" << a.base << "," << a.partition_mult << ",[";
    for (size_t i = 0; i < a.steps.size(); i++) {
        os << (i ? "," : "") << a.steps[i];
    }
    os << "]]";
    return os.str();
}

/** The text of a field, or "" when it holds its default and is optional. */
std::string print_field(const Instr &i, const Instr &def, const FieldSpec &f, const Program &p) {
    switch (f.kind) {
    case FieldKind::Ap: {
        const AccessPattern &ap = slot_ap(i, f.slot);
        return ap.present() ? print_access_pattern(ap, p) : "";
    }
    case FieldKind::Scalar: {
        const Scalar &s = slot_scalar(i, f.slot);
        return (f.optional && s == slot_scalar(def, f.slot)) ? "" : print_scalar(s, p);
    }
    case FieldKind::Alu: {
        AluOp op = slot_alu(i, f.slot);
        return (f.optional && op == slot_alu(def, f.slot)) ? "" : alu_op_name(op);
    }
    case FieldKind::Func:
        return act_func_name(i.func);
    case FieldKind::Float:
        return (f.optional && i.value == def.value) ? "" : fmt_float(i.value);
    case FieldKind::Affine:
        return print_affine(i.pattern);
    case FieldKind::Int: {
        int32_t v = slot_int(i, f.slot);
        return (f.optional && v == slot_int(def, f.slot)) ? "" : std::to_string(v);
    }
    case FieldKind::Flag:
        return (i.flags & slot_flag_bit(f.slot)) ? "<flag>" : "";
    }
    return "";
}

} // namespace

Instr default_instr(Opcode op) {
    Instr i;
    i.op = op;
    if (op == Opcode::Activation) {
        i.s0.imm = 1.0f; // scale
    }
    return i;
}

std::string print_access_pattern(const AccessPattern &ap, const Program &p) {
    std::ostringstream os;
    os << mem_space_name(ap.space) << "." << dtype_name(ap.dtype) << "[";
    if (ap.space == MemSpace::HBM) {
        bool ok = ap.var >= 0 && ap.var < int(p.vars.size());
        os << (ok ? p.vars[ap.var].name : "$" + std::to_string(ap.var));
    } else {
        os << ap.start_partition << ":" << ap.num_partitions;
    }
    os << "," << ap.offset << "]" << print_dims(ap);
    return os.str();
}

std::string print_instr(const Instr &i, const Program &p) {
    const OpSchema &sc = opcode_schema(i.op);
    Instr def = default_instr(i.op);
    std::string out = sc.name;
    for (const auto &f : sc.fields) {
        std::string v = print_field(i, def, f, p);
        if (v == "<flag>") {
            out += std::string(" ") + f.key;
        } else if (!v.empty()) {
            out += std::string(" ") + f.key + "=" + v;
        }
    }
    if (!i.waits.empty()) {
        out += " wait=";
        for (size_t k = 0; k < i.waits.size(); k++) {
            out += (k ? ",s" : "s") + std::to_string(i.waits[k].sem) +
                   ">=" + std::to_string(i.waits[k].value);
        }
    }
    if (i.signal >= 0) {
        out += " signal=s" + std::to_string(i.signal);
    }
    if (!i.name.empty()) {
        out += " name=" + quote(i.name);
    }
    return out;
}

std::string print_program(const Program &p) {
    std::ostringstream os;
    os << ".target " << p.target << "\n.name " << p.name << "\n";
    for (const auto &[k, v] : p.options) {
        os << ".option " << k << "=" << quote(v) << "\n";
    }
    for (const auto &v : p.vars) {
        os << ".var " << v.name << " " << var_kind_name(v.kind) << " " << dtype_name(v.dtype)
           << " [";
        for (size_t k = 0; k < v.shape.size(); k++) {
            os << (k ? "," : "") << v.shape[k];
        }
        os << "]" << (v.holds_bool ? " bool" : "") << "\n";
    }
    for (int e = 0; e < kNumEngines; e++) {
        if (p.streams[e].empty()) {
            continue;
        }
        os << ".engine " << target::engine_name(Engine(e)) << "\n";
        for (const auto &i : p.streams[e]) {
            os << "  " << print_instr(i, p) << "\n";
        }
    }
    return os.str();
}

} // namespace nhc::neff
