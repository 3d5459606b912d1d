#include "neff/DefJson.h"

#include "neff/Encoding.h"
#include "neff/NeffFile.h"
#include "support/Error.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <map>

#ifndef NHC_VERSION
#define NHC_VERSION "0.0.0"
#endif

namespace nhc::neff {

namespace json = llvm::json;

namespace {

/** NEFF variable types (neuron-compiler.md §4.2 `var`). */
const char *neff_var_type(VarKind k) {
    switch (k) {
    case VarKind::Input:
        return "input";
    case VarKind::Output:
        return "output";
    case VarKind::Weight:
        return "file";
    case VarKind::Scratch:
        return "tmp-buf";
    }
    return "?";
}

bool parse_neff_var_type(const std::string &s, VarKind &k) {
    for (VarKind v : {VarKind::Input, VarKind::Output, VarKind::Weight, VarKind::Scratch}) {
        if (s == neff_var_type(v)) {
            k = v;
            return true;
        }
    }
    return false;
}

std::string pretty(const json::Value &v) {
    return llvm::formatv("{0:2}", v).str() + "\n";
}

json::Value parse_json(const std::string &text, const char *member) {
    llvm::Expected<json::Value> v = json::parse(text);
    if (!v) {
        std::string msg = llvm::toString(v.takeError());
        user_error("NHC_ENEFF006", member, " is not valid JSON: ", msg);
    }
    if (!v->getAsObject()) {
        user_error("NHC_ENEFF006", member, " is not a JSON object");
    }
    return std::move(*v);
}

[[noreturn]] void bad_field(const char *member, const std::string &field, const char *expected) {
    user_error("NHC_ENEFF006", member, ": field '", field, "' is missing or not ", expected);
}

std::string get_str(const json::Object &o, const char *member, const char *key) {
    auto s = o.getString(key);
    if (!s) {
        bad_field(member, key, "a string");
    }
    return s->str();
}

int64_t get_int(const json::Object &o, const char *member, const char *key) {
    auto i = o.getInteger(key);
    if (!i) {
        bad_field(member, key, "an integer");
    }
    return *i;
}

} // namespace

std::string stream_member(Engine e) {
    return std::string("sg00/") + target::engine_name(e) + ".bin";
}
std::string weight_member(int var_id) {
    return "sg00/weights/" + std::to_string(var_id) + ".bin";
}
bool is_weight_member(const std::string &name) {
    return name.rfind("sg00/weights/", 0) == 0;
}

std::string make_info_json(const Program &p) {
    json::Object opts;
    for (const auto &[k, v] : p.options) {
        opts[k] = v;
    }
    json::Object o{{"tool", "neuron-halide-cc"},
                   {"tool_version", NHC_VERSION},
                   {"neff_version",
                    std::to_string(kNeffVersionMajor) + "." + std::to_string(kNeffVersionMinor)},
                   {"isa_version", int64_t(kIsaVersion)},
                   {"target", p.target},
                   {"name", p.name},
                   {"options", std::move(opts)}};
    return pretty(json::Value(std::move(o)));
}

std::string make_def_json(const Program &p) {
    json::Array vars;
    for (size_t i = 0; i < p.vars.size(); i++) {
        const Variable &v = p.vars[i];
        json::Array shape;
        for (int64_t d : v.shape) {
            shape.push_back(d);
        }
        json::Object o{{"var_id", int64_t(i)},          {"name", v.name},
                       {"type", neff_var_type(v.kind)}, {"dtype", dtype_numpy_name(v.dtype)},
                       {"shape", std::move(shape)},     {"size", v.size_bytes()},
                       {"hbm_offset", v.hbm_offset}};
        if (v.kind == VarKind::Weight) {
            o["file_name"] = weight_member(int(i));
        }
        if (v.holds_bool) {
            o["element_type"] = "bool";
        }
        vars.push_back(std::move(o));
    }
    json::Array engines;
    std::map<int, std::pair<std::string, int64_t>> queues; // sorted by queue id
    for (int e = 0; e < kNumEngines; e++) {
        engines.push_back(json::Object{{"engine", target::engine_name(Engine(e))},
                                       {"file", stream_member(Engine(e))},
                                       {"num_instructions", int64_t(p.streams[e].size())}});
        for (const auto &i : p.streams[e]) {
            if (i.op == Opcode::Dma) {
                auto &q = queues[i.queue];
                q.first = target::engine_name(Engine(e));
                q.second++;
            }
        }
    }
    json::Array dma;
    for (const auto &[q, v] : queues) {
        dma.push_back(
            json::Object{{"queue", int64_t(q)}, {"owner", v.first}, {"num_transfers", v.second}});
    }
    json::Object root{
        {"var", std::move(vars)}, {"engines", std::move(engines)}, {"dma_queue", std::move(dma)}};
    return pretty(json::Value(std::move(root)));
}

void parse_info_json(const std::string &text, Program &p) {
    json::Value v = parse_json(text, "info.json");
    const json::Object &o = *v.getAsObject();
    p.target = get_str(o, "info.json", "target");
    p.name = get_str(o, "info.json", "name");
    if (const json::Object *opts = o.getObject("options")) {
        for (const auto &kv : *opts) {
            auto s = kv.second.getAsString();
            if (!s) {
                bad_field("info.json", "options." + kv.first.str(), "a string");
            }
            p.options[kv.first.str()] = s->str();
        }
    }
}

std::vector<std::string> parse_def_json(const std::string &text, Program &p) {
    const char *m = "sg00/def.json";
    json::Value root = parse_json(text, m);
    const json::Object &o = *root.getAsObject();
    const json::Array *vars = o.getArray("var");
    if (!vars) {
        bad_field(m, "var", "an array");
    }
    for (const json::Value &vv : *vars) {
        const json::Object *vo = vv.getAsObject();
        if (!vo) {
            bad_field(m, "var[]", "an object");
        }
        Variable v;
        v.name = get_str(*vo, m, "name");
        std::string type = get_str(*vo, m, "type"), dtype = get_str(*vo, m, "dtype");
        if (!parse_neff_var_type(type, v.kind)) {
            user_error("NHC_ENEFF006", m, ": variable '", v.name, "' has unknown type '", type,
                       "'");
        }
        if (!parse_dtype_numpy_name(dtype, v.dtype)) {
            user_error("NHC_ENEFF006", m, ": variable '", v.name, "' has unknown dtype '", dtype,
                       "'");
        }
        const json::Array *shape = vo->getArray("shape");
        if (!shape) {
            bad_field(m, "shape", "an array");
        }
        for (const json::Value &d : *shape) {
            auto i = d.getAsInteger();
            if (!i || *i < 0) {
                bad_field(m, "shape[]", "a non-negative integer");
            }
            v.shape.push_back(*i);
        }
        if (auto e = vo->getString("element_type")) {
            v.holds_bool = *e == "bool";
            if (!v.holds_bool || v.dtype != DType::U8) {
                user_error("NHC_ENEFF006", m, ": variable '", v.name, "' has element type '",
                           e->str(), "' and dtype ", dtype,
                           "; expected element type 'bool', held as uint8");
            }
        }
        v.hbm_offset = get_int(*vo, m, "hbm_offset");
        if (get_int(*vo, m, "size") != v.size_bytes() || v.hbm_offset < 0) {
            user_error("NHC_ENEFF006", m, ": variable '", v.name, "' has size ",
                       get_int(*vo, m, "size"), ", its shape and dtype give ", v.size_bytes());
        }
        p.vars.push_back(std::move(v));
    }
    std::vector<std::string> files(kNumEngines);
    const json::Array *engines = o.getArray("engines");
    if (!engines) {
        bad_field(m, "engines", "an array");
    }
    for (const json::Value &ev : *engines) {
        const json::Object *eo = ev.getAsObject();
        if (!eo) {
            bad_field(m, "engines[]", "an object");
        }
        Engine e;
        std::string name = get_str(*eo, m, "engine");
        if (!parse_engine(name, e)) {
            user_error("NHC_ENEFF006", m, ": unknown engine '", name, "'");
        }
        files[int(e)] = get_str(*eo, m, "file");
    }
    return files;
}

} // namespace nhc::neff
