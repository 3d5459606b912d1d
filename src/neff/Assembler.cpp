/** \file
 * Parsing half of the assembler (Assembler.h). Errors are NHC_EASM codes; parse_program prefixes
 * them with the line number.
 */
#include "neff/Assembler.h"

#include "support/Error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace nhc::neff {

namespace {

// ---- parsing ----

[[noreturn]] void syntax(const std::string &what, const std::string &text, size_t pos) {
    user_error("NHC_EASM001", "expected ", what, " at column ", pos + 1, " of '", text, "'");
}

/** A cursor over one value token. */
struct Cursor {
    const std::string &s;
    size_t pos = 0;

    bool at(char c) const { return pos < s.size() && s[pos] == c; }
    bool done() const { return pos >= s.size(); }
    void expect(char c) {
        if (!at(c)) {
            syntax(std::string("'") + c + "'", s, pos);
        }
        pos++;
    }
    int64_t integer() {
        const char *b = s.c_str() + pos;
        char *e = nullptr;
        long long v = std::strtoll(b, &e, 10);
        if (e == b) {
            syntax("an integer", s, pos);
        }
        pos += size_t(e - b);
        return v;
    }
    float real() {
        const char *b = s.c_str() + pos;
        char *e = nullptr;
        float v = std::strtof(b, &e);
        if (e == b) {
            syntax("a number", s, pos);
        }
        pos += size_t(e - b);
        return v;
    }
    std::string ident() {
        size_t b = pos;
        while (pos < s.size() && (std::isalnum((unsigned char)s[pos]) || s[pos] == '_' ||
                                  s[pos] == '/' || s[pos] == '-' || s[pos] == '.')) {
            pos++;
        }
        if (b == pos) {
            syntax("a name", s, pos);
        }
        return s.substr(b, pos - b);
    }
    /** An identifier that stops at '.' (space and dtype names). */
    std::string word() {
        size_t b = pos;
        while (pos < s.size() && (std::isalnum((unsigned char)s[pos]) || s[pos] == '_')) {
            pos++;
        }
        if (b == pos) {
            syntax("a word", s, pos);
        }
        return s.substr(b, pos - b);
    }
    void end() {
        if (!done()) {
            syntax("end of value", s, pos);
        }
    }
};

std::vector<Dim> parse_dim_list(Cursor &c) {
    std::vector<Dim> dims;
    c.expect('[');
    while (!c.at(']')) {
        if (!dims.empty()) {
            c.expect(',');
        }
        Dim d;
        c.expect('[');
        d.step = c.integer();
        c.expect(',');
        d.num = c.integer();
        c.expect(']');
        dims.push_back(d);
    }
    c.expect(']');
    return dims;
}

AccessPattern parse_ap(Cursor &c, const Program &p) {
    AccessPattern ap;
    std::string space = c.word();
    if (space == "sbuf") {
        ap.space = MemSpace::SBUF;
    } else if (space == "psum") {
        ap.space = MemSpace::PSUM;
    } else if (space == "hbm") {
        ap.space = MemSpace::HBM;
    } else {
        user_error("NHC_EASM004", "unknown memory '", space, "' in '", c.s,
                   "': expected sbuf, psum or hbm");
    }
    c.expect('.');
    std::string dt = c.word();
    if (!parse_dtype(dt, ap.dtype)) {
        user_error("NHC_EASM004", "unknown dtype '", dt, "' in '", c.s, "'");
    }
    if (!dtype_on_device(ap.dtype)) {
        user_error("NHC_EASM004", "dtype '", dt, "' in '", c.s,
                   "': the engines have no 64-bit types (f64 and u64 are for variables only)");
    }
    c.expect('[');
    if (ap.space == MemSpace::HBM) {
        std::string var = c.ident();
        ap.var = p.var_index(var);
        if (ap.var < 0) {
            user_error("NHC_EASM004", "unknown variable '", var, "' in '", c.s, "'");
        }
    } else {
        ap.start_partition = int32_t(c.integer());
        c.expect(':');
        ap.num_partitions = int32_t(c.integer());
    }
    c.expect(',');
    ap.offset = c.integer();
    c.expect(']');
    ap.dims = parse_dim_list(c);
    if (ap.space == MemSpace::HBM) {
        if (ap.dims.empty()) {
            syntax("a row dimension [step,rows]", c.s, c.pos);
        }
        ap.partition_step = ap.dims[0].step;
        ap.num_partitions = int32_t(ap.dims[0].num);
        ap.dims.erase(ap.dims.begin());
    }
    if (ap.dims.size() > size_t(kMaxFreeDims)) {
        user_error("NHC_EASM001", "access pattern '", c.s, "' has ", ap.dims.size(),
                   " free dimensions: at most ", kMaxFreeDims);
    }
    return ap;
}

Affine parse_affine(Cursor &c) {
    Affine a;
    c.expect('[');
    a.base = c.integer();
    c.expect(',');
    a.partition_mult = c.integer();
    c.expect(',');
    c.expect('[');
    while (!c.at(']')) {
        if (!a.steps.empty()) {
            c.expect(',');
        }
        a.steps.push_back(c.integer());
    }
    c.expect(']');
    c.expect(']');
    return a;
}

std::vector<SemWait> parse_waits(Cursor &c) {
    std::vector<SemWait> waits;
    do {
        if (!waits.empty()) {
            c.expect(',');
        }
        SemWait w;
        c.expect('s');
        w.sem = uint32_t(c.integer());
        c.expect('>');
        c.expect('=');
        w.value = uint32_t(c.integer());
        waits.push_back(w);
    } while (c.at(','));
    return waits;
}

std::string unquote(const std::string &v) {
    if (v.size() < 2 || v.front() != '"' || v.back() != '"') {
        syntax("a quoted string", v, 0);
    }
    std::string out;
    for (size_t i = 1; i + 1 < v.size(); i++) {
        if (v[i] == '\\' && i + 2 < v.size()) {
            i++;
        }
        out += v[i];
    }
    return out;
}

/** Splits on blanks outside double quotes; stops at a ';' comment. */
std::vector<std::string> tokens(const std::string &line) {
    std::vector<std::string> out;
    std::string cur;
    bool in_quote = false;
    for (size_t i = 0; i < line.size(); i++) {
        char ch = line[i];
        if (in_quote) {
            cur += ch;
            if (ch == '\\' && i + 1 < line.size()) {
                cur += line[++i];
            } else if (ch == '"') {
                in_quote = false;
            }
        } else if (ch == ';' || ch == '#') {
            break;
        } else if (std::isspace((unsigned char)ch)) {
            if (!cur.empty()) {
                out.push_back(cur);
            }
            cur.clear();
        } else {
            in_quote = ch == '"';
            cur += ch;
        }
    }
    if (in_quote) {
        syntax("a closing '\"'", line, line.size());
    }
    if (!cur.empty()) {
        out.push_back(cur);
    }
    return out;
}

void parse_field(Instr &i, const FieldSpec &f, const std::string &value, const Program &p) {
    Cursor c{value};
    switch (f.kind) {
    case FieldKind::Ap:
        slot_ap(i, f.slot) = parse_ap(c, p);
        break;
    case FieldKind::Scalar: {
        Scalar &s = slot_scalar(i, f.slot);
        s = Scalar();
        if (!value.empty() && std::isalpha((unsigned char)value[0]) &&
            value.find('.') != value.npos) {
            s.is_ap = true;
            s.ap = parse_ap(c, p);
        } else {
            s.imm = c.real();
        }
        break;
    }
    case FieldKind::Alu: {
        std::string w = c.word();
        if (!parse_alu_op(w, slot_alu(i, f.slot))) {
            user_error("NHC_EASM004", "unknown alu op '", w, "' for field '", f.key, "'");
        }
        break;
    }
    case FieldKind::Func: {
        std::string w = c.word();
        if (!parse_act_func(w, i.func)) {
            user_error("NHC_EASM004", "unknown activation function '", w, "'");
        }
        break;
    }
    case FieldKind::Float:
        i.value = c.real();
        break;
    case FieldKind::Affine:
        i.pattern = parse_affine(c);
        break;
    case FieldKind::Int:
        slot_int(i, f.slot) = int32_t(c.integer());
        break;
    case FieldKind::Flag:
        syntax(std::string("no value for flag '") + f.key + "'", value, 0);
    }
    c.end();
}

} // namespace

Instr parse_instr(const std::string &line, const Program &p, Engine e) {
    std::vector<std::string> toks = tokens(line);
    nhc_assert(!toks.empty(), "parse_instr on an empty line");
    Instr i;
    if (!parse_opcode(toks[0], i.op)) {
        user_error("NHC_EASM002", "unknown instruction '", toks[0], "'");
    }
    i = default_instr(i.op);
    const OpSchema &sc = opcode_schema(i.op);
    if (!engine_can_run(i.op, e)) {
        user_error("NHC_EASM005", "instruction '", sc.name, "' cannot run on engine ",
                   target::engine_name(e));
    }
    std::vector<bool> seen(sc.fields.size(), false);
    for (size_t t = 1; t < toks.size(); t++) {
        size_t eq = toks[t].find('=');
        std::string key = toks[t].substr(0, eq);
        std::string value = eq == std::string::npos ? "" : toks[t].substr(eq + 1);
        if (key == "wait" || key == "signal" || key == "name") {
            Cursor c{value};
            if (key == "wait") {
                i.waits = parse_waits(c);
            } else if (key == "signal") {
                c.expect('s');
                i.signal = int32_t(c.integer());
            } else {
                i.name = unquote(value);
                continue;
            }
            c.end();
            continue;
        }
        size_t k = 0;
        while (k < sc.fields.size() && key != sc.fields[k].key) {
            k++;
        }
        if (k == sc.fields.size()) {
            user_error("NHC_EASM003", "unknown field '", key, "' for instruction '", sc.name, "'");
        }
        seen[k] = true;
        if (sc.fields[k].kind == FieldKind::Flag) {
            if (eq != std::string::npos) {
                syntax(std::string("no value for flag '") + key + "'", toks[t], eq);
            }
            i.flags |= slot_flag_bit(sc.fields[k].slot);
        } else {
            parse_field(i, sc.fields[k], value, p);
        }
    }
    for (size_t k = 0; k < sc.fields.size(); k++) {
        if (!seen[k] && !sc.fields[k].optional) {
            user_error("NHC_EASM003", "instruction '", sc.name, "' is missing field '",
                       sc.fields[k].key, "'");
        }
    }
    return i;
}

namespace {

void parse_var(const std::vector<std::string> &t, Program &p,
               std::vector<std::pair<std::string, std::string>> *files) {
    if (t.size() < 5) {
        user_error("NHC_EASM001", "expected '.var NAME KIND DTYPE [SHAPE]'");
    }
    Variable v;
    v.name = t[1];
    if (p.var_index(v.name) >= 0) {
        user_error("NHC_EASM001", "variable '", v.name, "' defined twice");
    }
    if (!parse_var_kind(t[2], v.kind)) {
        user_error("NHC_EASM004", "unknown variable kind '", t[2],
                   "': expected input, output, weight or scratch");
    }
    if (!parse_dtype(t[3], v.dtype)) {
        user_error("NHC_EASM004", "unknown dtype '", t[3], "'");
    }
    Cursor c{t[4]};
    c.expect('[');
    while (!c.at(']')) {
        if (!v.shape.empty()) {
            c.expect(',');
        }
        v.shape.push_back(c.integer());
    }
    c.expect(']');
    c.end();
    for (size_t k = 5; k < t.size(); k++) {
        if (t[k] == "bool" && v.dtype == DType::U8) { // an ONNX bool, held as u8 0 or 1
            v.holds_bool = true;
            continue;
        }
        if (t[k].rfind("file=", 0) != 0) {
            user_error("NHC_EASM003", "unknown attribute '", t[k], "' of variable '", v.name, "'");
        }
        if (files) {
            files->push_back({v.name, unquote(t[k].substr(5))});
        }
    }
    p.vars.push_back(v);
}

void parse_directive(const std::vector<std::string> &t, Program &p, int &engine,
                     std::vector<std::pair<std::string, std::string>> *files) {
    const std::string &d = t[0];
    if (d == ".var") {
        parse_var(t, p, files);
        return;
    }
    if (t.size() != 2) {
        user_error("NHC_EASM001", "directive '", d, "' takes one argument");
    }
    if (d == ".target") {
        p.target = t[1];
    } else if (d == ".name") {
        p.name = t[1];
    } else if (d == ".option") {
        size_t eq = t[1].find('=');
        if (eq == std::string::npos) {
            user_error("NHC_EASM001", "expected '.option key=\"value\"'");
        }
        p.options[t[1].substr(0, eq)] = unquote(t[1].substr(eq + 1));
    } else if (d == ".engine") {
        Engine e;
        if (!parse_engine(t[1], e)) {
            user_error("NHC_EASM004", "unknown engine '", t[1],
                       "': expected pe, act, dve, pool or sp");
        }
        engine = int(e);
    } else {
        user_error("NHC_EASM002", "unknown directive '", d, "'");
    }
}

} // namespace

Program parse_program(const std::string &text,
                      std::vector<std::pair<std::string, std::string>> *weight_files) {
    Program p;
    p.target.clear();
    p.name.clear();
    std::istringstream in(text);
    std::string line;
    int line_no = 0;
    int engine = -1;
    while (std::getline(in, line)) {
        line_no++;
        try {
            std::vector<std::string> t = tokens(line);
            if (t.empty()) {
                continue;
            }
            if (t[0][0] == '.') {
                parse_directive(t, p, engine, weight_files);
            } else if (engine < 0) {
                user_error("NHC_EASM001", "instruction before any '.engine' directive");
            } else {
                p.streams[engine].push_back(parse_instr(line, p, Engine(engine)));
            }
        } catch (const UserError &err) {
            throw UserError(err.code(), "line " + std::to_string(line_no) + ": " + err.what());
        }
    }
    if (p.target.empty()) {
        p.target = "trn1";
    }
    if (p.name.empty()) {
        p.name = "model";
    }
    p.layout_hbm();
    return p;
}

} // namespace nhc::neff
