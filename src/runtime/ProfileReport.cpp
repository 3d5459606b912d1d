#include "runtime/ProfileReport.h"

#include "runtime/Profile.h"
#include "runtime/TimelineSvg.h"
#include "support/Error.h"
#include "target/Target.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace nhc::rt {

namespace {

namespace json = llvm::json;

/** A bound needs its resource busy at least this share of the time the group adds. */
constexpr double kBoundShare = 0.5;

std::vector<std::string> split_nodes(const std::string &group) {
    std::vector<std::string> nodes;
    size_t begin = 0;
    while (begin <= group.size()) {
        size_t plus = group.find('+', begin);
        nodes.push_back(group.substr(begin, plus == std::string::npos ? plus : plus - begin));
        if (plus == std::string::npos)
            break;
        begin = plus + 1;
    }
    return nodes;
}

using Intervals = std::vector<std::pair<double, double>>;

/** The union of intervals, in time order. */
Intervals merged(Intervals iv) {
    std::sort(iv.begin(), iv.end());
    Intervals out;
    for (const auto &[start, end] : iv) {
        if (!out.empty() && start <= out.back().second)
            out.back().second = std::max(out.back().second, end);
        else
            out.emplace_back(start, end);
    }
    return out;
}

/** Per engine, the union of its instructions' intervals; under "dma", that of every transfer
 *  on any queue (when some transfer is in flight). */
std::map<std::string, Intervals> busy_lanes(const std::vector<TraceEvent> &events) {
    std::map<std::string, Intervals> lanes;
    for (const TraceEvent &e : events)
        lanes[e.track.rfind("dma", 0) == 0 ? "dma" : e.track].emplace_back(e.start_ns, e.end_ns);
    for (auto &[lane, iv] : lanes)
        iv = merged(std::move(iv));
    return lanes;
}

/** How long the lane is busy within [t0, t1). */
double busy_within(const Intervals &iv, double t0, double t1) {
    auto first = std::lower_bound(
        iv.begin(), iv.end(), t0,
        [](const std::pair<double, double> &i, double t) { return i.second <= t; });
    double busy = 0;
    for (auto i = first; i != iv.end() && i->first < t1; ++i)
        busy += std::min(i->second, t1) - std::max(i->first, t0);
    return busy;
}

/** What bounds the time a group adds, [end - adds, end): whatever runs then, of any group. */
std::string bound_of(const ProfileRow &p, const std::map<std::string, Intervals> &lanes) {
    if (p.adds_ns <= 0)
        return "-";
    double t1 = p.end_ns, t0 = p.end_ns - p.adds_ns;
    double engine_share = 0, dma_share = 0;
    for (const auto &[lane, iv] : lanes) {
        double &share = lane == "dma" ? dma_share : engine_share;
        share = std::max(share, busy_within(iv, t0, t1) / p.adds_ns);
    }
    if (std::max(engine_share, dma_share) < kBoundShare)
        return "dependency";
    return dma_share > engine_share ? "dma" : "compute";
}

NodeTimeRow row_of(const ProfileRow &p, const std::map<std::string, Intervals> &lanes) {
    NodeTimeRow r;
    r.group = p.group;
    r.nodes = split_nodes(p.group);
    r.time_ns = p.adds_ns;
    r.span_ns = p.end_ns - p.start_ns;
    int busiest = int(std::max_element(p.busy_ns, p.busy_ns + neff::kNumEngines) - p.busy_ns);
    bool dma = p.dma_queue_ns > p.busy_ns[busiest];
    r.engine = dma ? "dma" : target::engine_name(neff::Engine(busiest));
    r.bound = bound_of(p, lanes);
    return r;
}

std::string us(double ns) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", ns / 1000.0);
    return buf;
}

} // namespace

std::vector<NodeTimeRow> node_time_rows(const std::vector<TraceEvent> &events, double total_ns) {
    std::map<std::string, Intervals> lanes = busy_lanes(events);
    std::vector<NodeTimeRow> rows;
    double last_end = 0;
    for (const ProfileRow &p : profile_rows(events)) { // largest adds first
        rows.push_back(row_of(p, lanes));
        last_end = std::max(last_end, p.end_ns);
    }
    if (total_ns > last_end) {
        NodeTimeRow tail;
        tail.group = "(after the last instruction)";
        tail.time_ns = total_ns - last_end;
        tail.engine = "-";
        tail.bound = "dependency";
        rows.push_back(tail);
        std::stable_sort(rows.begin(), rows.end(), [](const NodeTimeRow &a, const NodeTimeRow &b) {
            return a.time_ns > b.time_ns;
        });
    }
    return rows;
}

std::string node_table_markdown(const std::vector<NodeTimeRow> &rows, double total_ns) {
    std::string out = "# Where the time goes: " + us(total_ns) + " us\n\n" +
                      "One row per group of ONNX nodes (the nodes fused into one group share it), "
                      "largest first. *Time* is what the group adds to the latency: from the end "
                      "of the groups that finished before it to its own end, so the rows sum to "
                      "the latency. *Engine* is the one most busy with the group's instructions "
                      "(dma when its transfers took longer). *Bound* is judged on every "
                      "instruction running in the time the group adds: compute when an engine is "
                      "busy half of it or more and at least as long as transfers are in flight, "
                      "dma when transfers are in flight half of it or more and longer, else "
                      "dependency (engines and DMA mostly wait).\n\n" +
                      "| time (us) | share | span (us) | engine | bound | ONNX nodes |\n" +
                      "|---:|---:|---:|---|---|---|\n";
    for (const NodeTimeRow &r : rows) {
        char share[32];
        std::snprintf(share, sizeof share, "%.1f%%",
                      total_ns > 0 ? 100.0 * r.time_ns / total_ns : 0.0);
        std::string nodes;
        for (const std::string &n : r.nodes.empty() ? std::vector<std::string>{r.group} : r.nodes)
            nodes += (nodes.empty() ? "`" : ", `") + n + "`";
        out += "| " + us(r.time_ns) + " | " + share + " | " + us(r.span_ns) + " | " + r.engine +
               " | " + r.bound + " | " + nodes + " |\n";
    }
    return out;
}

std::string node_table_json(const std::vector<NodeTimeRow> &rows, double total_ns) {
    json::Array out;
    for (const NodeTimeRow &r : rows) {
        json::Array nodes;
        for (const std::string &n : r.nodes)
            nodes.push_back(n);
        out.push_back(json::Object{{"group", r.group},
                                   {"nodes", std::move(nodes)},
                                   {"time_us", r.time_ns / 1000.0},
                                   {"share", total_ns > 0 ? r.time_ns / total_ns : 0.0},
                                   {"span_us", r.span_ns / 1000.0},
                                   {"engine", r.engine},
                                   {"bound", r.bound}});
    }
    json::Object root{{"total_time_us", total_ns / 1000.0}, {"rows", std::move(out)}};
    return llvm::formatv("{0:2}", json::Value(std::move(root))).str() + "\n";
}

void write_profile_dir(const std::string &dir, const std::vector<TraceEvent> &events,
                       double total_ns, const std::string &model_name) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    auto write = [&](const std::string &name, const std::string &text) {
        std::string path = (std::filesystem::path(dir) / name).string();
        std::ofstream out(path, std::ios::binary);
        out << text;
        if (!out)
            user_error("NHC_ERT023", "cannot write '", path, "' (--profile-dir ", dir,
                       "): check that the folder can be made and written");
    };
    std::vector<NodeTimeRow> rows = node_time_rows(events, total_ns);
    write("trace.json", trace_json(events, model_name));
    write("timeline.svg", timeline_svg(events, total_ns, model_name));
    write("nodes.md", node_table_markdown(rows, total_ns));
    write("nodes.json", node_table_json(rows, total_ns));
}

} // namespace nhc::rt
