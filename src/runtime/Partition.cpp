#include "runtime/Partition.h"

#include "support/Error.h"

#include <chrono>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <optional>
#include <set>

namespace nhc::rt {

namespace json = llvm::json;

namespace {

constexpr const char *kManifest = "partition.json";

[[noreturn]] void bad_manifest(const std::string &what) {
    user_error("NHC_ENEFF006", kManifest, ": ", what);
}

json::Array names_json(const std::vector<std::string> &names) {
    json::Array a;
    for (const std::string &n : names)
        a.push_back(n);
    return a;
}

std::vector<std::string> names_of(const json::Object &o, const char *key) {
    const json::Array *a = o.getArray(key);
    if (!a)
        bad_manifest(std::string("field '") + key + "' is missing or not an array");
    std::vector<std::string> names;
    for (const json::Value &v : *a) {
        auto s = v.getAsString();
        if (!s)
            bad_manifest(std::string("field '") + key + "' holds a value that is not a string");
        names.push_back(s->str());
    }
    return names;
}

const neff::Variable *find_var(const std::vector<neff::Variable> &vars, const std::string &name,
                               neff::VarKind kind) {
    for (const neff::Variable &v : vars)
        if (v.name == name && v.kind == kind)
            return &v;
    return nullptr;
}

const std::vector<neff::Variable> &segment_vars(const Partition &p, size_t s) {
    return p.device[s] ? p.device[s]->program().vars : p.host[s]->io();
}

/** The variable of `name` as segment `s` reads or writes it; NHC_ENEFF015 when it does not. */
const neff::Variable &segment_var(const Partition &p, size_t s, const std::string &name,
                                  neff::VarKind kind) {
    const neff::Variable *v = find_var(segment_vars(p, s), name, kind);
    if (!v)
        user_error("NHC_ENEFF015", "segment '", p.manifest.segments[s].file, "' has no ",
                   neff::var_kind_name(kind), " '", name, "' that ", kManifest, " says it has");
    return *v;
}

/** Each crossing value has one type on both sides, and the model's inputs and outputs are typed
 *  by the segments that read and write them. */
std::vector<neff::Variable> check_and_type_io(const Partition &p) {
    std::map<std::string, const neff::Variable *> written; // by the latest segment
    std::vector<neff::Variable> inputs, outputs;
    std::set<std::string> model_inputs(p.manifest.inputs.begin(), p.manifest.inputs.end());
    std::map<std::string, neff::Variable> first_read;
    for (size_t s = 0; s < p.manifest.segments.size(); s++) {
        const PartitionManifest::Segment &seg = p.manifest.segments[s];
        for (const std::string &name : seg.inputs) {
            const neff::Variable &in = segment_var(p, s, name, neff::VarKind::Input);
            const neff::Variable *from = written.count(name) ? written[name] : nullptr;
            if (!from && !model_inputs.count(name))
                user_error("NHC_ENEFF015", "segment '", seg.file, "' reads '", name,
                           "', which no earlier segment writes and the model does not take");
            if (from && (from->dtype != in.dtype || from->holds_bool != in.holds_bool))
                user_error("NHC_ENEFF015", "value '", name, "' is written as ",
                           neff::dtype_name(from->dtype), " and read by segment '", seg.file,
                           "' as ", neff::dtype_name(in.dtype));
            if (!from)
                first_read.emplace(name, in);
        }
        for (const std::string &name : seg.outputs)
            written[name] = &segment_var(p, s, name, neff::VarKind::Output);
    }
    std::vector<neff::Variable> io;
    for (const std::string &name : p.manifest.inputs) {
        if (!first_read.count(name))
            user_error("NHC_ENEFF015", "model input '", name, "' is read by no segment");
        io.push_back(first_read.at(name));
    }
    for (const std::string &name : p.manifest.outputs) {
        if (!written.count(name))
            user_error("NHC_ENEFF015", "model output '", name, "' is written by no segment");
        io.push_back(*written.at(name));
    }
    return io;
}

void add_summary(Summary &to, const Summary &s) {
    to.total_ns += s.total_ns;
    for (int e = 0; e < neff::kNumEngines; e++) {
        to.busy_ns[e] += s.busy_ns[e];
        to.instructions[e] += s.instructions[e];
    }
    to.dma_busy_ns += s.dma_busy_ns;
    to.dma_engines = std::max(to.dma_engines, s.dma_engines);
    to.dma_bytes += s.dma_bytes;
    to.dma_transfers += s.dma_transfers;
    to.flops += s.flops;
    to.ideal_pe_ns += s.ideal_pe_ns;
}

void check_inputs(const Partition &p, const std::map<std::string, Tensor> &inputs, bool timing) {
    for (const auto &[name, t] : inputs)
        if (!find_var(p.io, name, neff::VarKind::Input))
            user_error("NHC_ERT002", "unknown input '", name,
                       "': the model has no input of that name");
    for (const neff::Variable &v : p.io) {
        if (v.kind != neff::VarKind::Input)
            continue;
        auto it = inputs.find(v.name);
        if (it == inputs.end() && !timing)
            user_error("NHC_ERT001", "missing input '", v.name, "' (", neff::dtype_name(v.dtype),
                       " ", shape_str(v.shape), ")");
        if (it != inputs.end() && (it->second.dtype != v.dtype || it->second.shape != v.shape ||
                                   int64_t(it->second.data.size()) != v.size_bytes()))
            user_error("NHC_ERT003", "input '", v.name, "' is ", neff::dtype_name(it->second.dtype),
                       " ", shape_str(it->second.shape), ": expected ", neff::dtype_name(v.dtype),
                       " ", shape_str(v.shape));
    }
}

} // namespace

std::string partition_json(const PartitionManifest &m) {
    json::Array segments;
    for (const PartitionManifest::Segment &s : m.segments)
        segments.push_back(json::Object{{"kind", s.on_host ? "host" : "device"},
                                        {"file", s.file},
                                        {"inputs", names_json(s.inputs)},
                                        {"outputs", names_json(s.outputs)}});
    json::Object root{{"inputs", names_json(m.inputs)},
                      {"outputs", names_json(m.outputs)},
                      {"segments", std::move(segments)}};
    return llvm::formatv("{0:2}", json::Value(std::move(root))).str() + "\n";
}

PartitionManifest parse_partition_json(const std::string &text) {
    llvm::Expected<json::Value> v = json::parse(text);
    if (!v)
        bad_manifest("not valid JSON: " + llvm::toString(v.takeError()));
    const json::Object *root = v->getAsObject();
    if (!root)
        bad_manifest("not a JSON object");
    PartitionManifest m;
    m.inputs = names_of(*root, "inputs");
    m.outputs = names_of(*root, "outputs");
    const json::Array *segments = root->getArray("segments");
    if (!segments || segments->empty())
        bad_manifest("field 'segments' is missing, empty or not an array");
    for (const json::Value &sv : *segments) {
        const json::Object *o = sv.getAsObject();
        llvm::Optional<llvm::StringRef> kind, file;
        if (o) {
            kind = o->getString("kind");
            file = o->getString("file");
        }
        if (!kind || !file || (*kind != "host" && *kind != "device"))
            bad_manifest("a segment has no 'kind' (host or device) or no 'file'");
        PartitionManifest::Segment seg;
        seg.on_host = *kind == "host";
        seg.file = file->str();
        seg.inputs = names_of(*o, "inputs");
        seg.outputs = names_of(*o, "outputs");
        m.segments.push_back(std::move(seg));
    }
    return m;
}

std::unique_ptr<Partition> load_partition(const neff::NeffContents &c, const LoadOptions &opt) {
    auto p = std::make_unique<Partition>();
    p->manifest = parse_partition_json(c.partition_json);
    for (const PartitionManifest::Segment &seg : p->manifest.segments) {
        auto it = c.segment_files.find(seg.file);
        if (it == c.segment_files.end())
            user_error("NHC_ENEFF015", "the partitioned NEFF has no segment file '", seg.file,
                       "' that ", kManifest, " names");
        p->device.push_back(seg.on_host ? nullptr : Model::load(it->second, opt));
        p->host.push_back(seg.on_host ? HostSegment::load(it->second, seg.file) : nullptr);
    }
    p->io = check_and_type_io(*p);
    return p;
}

ExecResult execute_partition(const Partition &p, const std::map<std::string, Tensor> &inputs,
                             const ExecOptions &opt) {
    check_inputs(p, inputs, opt.timing_only);
    int64_t instructions = 0;
    for (const auto &m : p.device)
        for (size_t e = 0; m && e < m->program().streams.size(); e++)
            instructions += int64_t(m->program().streams[e].size());
    if (opt.max_instructions > 0 && instructions > opt.max_instructions)
        user_error("NHC_ERT022", "the model's device segments have ", instructions,
                   " instructions; the run may execute at most ", opt.max_instructions,
                   " (--max-instructions)");
    std::map<std::string, Tensor> values = inputs;
    ExecResult out;
    for (size_t s = 0; s < p.manifest.segments.size(); s++) {
        const PartitionManifest::Segment &seg = p.manifest.segments[s];
        std::map<std::string, Tensor> in;
        for (const std::string &name : seg.inputs)
            if (auto it = values.find(name); it != values.end())
                in[name] = it->second;
        if (p.device[s]) {
            ExecResult r = p.device[s]->execute(in, opt);
            for (TraceEvent &ev : r.trace) { // after the segments before it
                ev.start_ns += out.summary.total_ns;
                ev.end_ns += out.summary.total_ns;
                out.trace.push_back(std::move(ev));
            }
            add_summary(out.summary, r.summary);
            for (auto &[name, t] : r.outputs)
                values[name] = std::move(t);
            continue;
        }
        if (opt.timing_only)
            continue; // the host computes values, and a timing-only run has none
        out.summary.host_nodes += p.host[s]->node_count();
        auto start = std::chrono::steady_clock::now();
        for (auto &[name, t] : p.host[s]->run(in))
            values[name] = std::move(t);
        out.summary.host_ns +=
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                .count();
    }
    if (!opt.timing_only)
        for (const std::string &name : p.manifest.outputs)
            out.outputs[name] = values.at(name);
    return out;
}

} // namespace nhc::rt
