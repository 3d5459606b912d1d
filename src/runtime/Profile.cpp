#include "runtime/Profile.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace nhc::rt {

namespace json = llvm::json;

std::string summary_json(const Summary &s, const target::TargetInfo &t) {
    json::Object engines;
    for (int e = 0; e < neff::kNumEngines; e++) {
        neff::Engine en = neff::Engine(e);
        engines[target::engine_name(en)] = json::Object{{"busy_us", s.busy_ns[e] / 1000.0},
                                                        {"busy_fraction", s.busy_fraction(en)},
                                                        {"instructions", s.instructions[e]}};
    }
    json::Object root{
        {"target", t.name},
        {"total_time_us", s.total_ns / 1000.0},
        {"mfu", s.mfu()},
        {"flops", s.flops},
        {"dma_bytes", s.dma_bytes},
        {"engines", std::move(engines)},
        {"dma", json::Object{{"transfers", s.dma_transfers},
                             {"engines", int64_t(s.dma_engines)},
                             {"busy_fraction", s.dma_busy_fraction()}}},
    };
    if (s.host_nodes > 0)
        root["host"] = json::Object{{"nodes", int64_t(s.host_nodes)},
                                    {"time_us", s.host_ns / 1000.0},
                                    {"measured", "wall clock on this machine's CPU"}};
    return llvm::formatv("{0:2}", json::Value(std::move(root))).str() + "\n";
}

std::string summary_text(const Summary &s, const target::TargetInfo &t) {
    char buf[256];
    std::string out;
    std::snprintf(buf, sizeof buf, "latency: %.3f us on %s (simulated)\n", s.total_ns / 1000.0,
                  t.name.c_str());
    out += buf;
    std::snprintf(buf, sizeof buf, "flops: %.6g  mfu: %.2f%%  dma: %lld bytes in %lld transfers\n",
                  s.flops, 100.0 * s.mfu(), (long long)s.dma_bytes, (long long)s.dma_transfers);
    out += buf;
    out += "utilisation:";
    for (int e = 0; e < neff::kNumEngines; e++) {
        std::snprintf(buf, sizeof buf, " %s %.1f%%", target::engine_name(neff::Engine(e)),
                      100.0 * s.busy_fraction(neff::Engine(e)));
        out += buf;
    }
    std::snprintf(buf, sizeof buf, " dma %.1f%%\n", 100.0 * s.dma_busy_fraction());
    out += buf;
    if (s.host_nodes > 0) {
        std::snprintf(buf, sizeof buf,
                      "host: %d node(s) in %.3f us (measured on this CPU, not in the latency)\n",
                      s.host_nodes, s.host_ns / 1000.0);
        out += buf;
    }
    return out;
}

std::vector<std::string> trace_tracks(const std::vector<TraceEvent> &events) {
    std::vector<std::string> tracks;
    for (int e = 0; e < neff::kNumEngines; e++)
        tracks.push_back(target::engine_name(neff::Engine(e)));
    std::map<int, std::string> queues;
    for (const auto &ev : events)
        if (ev.track.rfind("dma q", 0) == 0)
            queues[std::stoi(ev.track.substr(5))] = ev.track;
    for (const auto &[q, name] : queues)
        tracks.push_back(name);
    return tracks;
}

std::string group_name(const TraceEvent &e) {
    size_t space = e.name.find(' ');
    return space == std::string::npos ? "(unnamed)" : e.name.substr(space + 1);
}

std::string trace_json(const std::vector<TraceEvent> &events, const std::string &model_name) {
    // Thread ids: engines first in their fixed order, then DMA queues in numeric order.
    std::map<std::string, int> tids;
    std::vector<std::string> tracks = trace_tracks(events);
    for (size_t i = 0; i < tracks.size(); i++)
        tids[tracks[i]] = int(i);
    std::vector<const TraceEvent *> sorted;
    for (const auto &ev : events) {
        sorted.push_back(&ev);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [&](const TraceEvent *a, const TraceEvent *b) {
        int ta = tids[a->track], tb = tids[b->track];
        return ta != tb ? ta < tb : a->start_ns < b->start_ns;
    });
    json::Array out;
    out.push_back(json::Object{{"name", "process_name"},
                               {"ph", "M"},
                               {"pid", 0},
                               {"tid", 0},
                               {"args", json::Object{{"name", model_name}}}});
    for (const auto &[name, tid] : tids) {
        out.push_back(json::Object{{"name", "thread_name"},
                                   {"ph", "M"},
                                   {"pid", 0},
                                   {"tid", tid},
                                   {"args", json::Object{{"name", name}}}});
        out.push_back(json::Object{{"name", "thread_sort_index"},
                                   {"ph", "M"},
                                   {"pid", 0},
                                   {"tid", tid},
                                   {"args", json::Object{{"sort_index", tid}}}});
    }
    for (const TraceEvent *ev : sorted) {
        json::Object args{{"index", int64_t(ev->index)}};
        if (ev->bytes) {
            args["bytes"] = ev->bytes;
        }
        out.push_back(json::Object{{"name", ev->name},
                                   {"ph", "X"},
                                   {"pid", 0},
                                   {"tid", tids[ev->track]},
                                   {"ts", ev->start_ns / 1000.0},
                                   {"dur", (ev->end_ns - ev->start_ns) / 1000.0},
                                   {"args", std::move(args)}});
    }
    json::Object root{{"traceEvents", std::move(out)}, {"displayTimeUnit", "ns"}};
    return llvm::formatv("{0}", json::Value(std::move(root))).str() + "\n";
}

std::vector<ProfileRow> profile_rows(const std::vector<TraceEvent> &events) {
    std::map<std::string, ProfileRow> by_group;
    for (const TraceEvent &e : events) {
        std::string group = group_name(e);
        auto [it, fresh] = by_group.try_emplace(group);
        ProfileRow &r = it->second;
        if (fresh) {
            r.group = group;
            r.start_ns = e.start_ns;
        }
        r.start_ns = std::min(r.start_ns, e.start_ns);
        r.end_ns = std::max(r.end_ns, e.end_ns);
        if (e.track.rfind("dma", 0) == 0) {
            r.dma_queue_ns += e.end_ns - e.start_ns;
            continue;
        }
        for (int k = 0; k < neff::kNumEngines; k++)
            if (e.track == target::engine_name(neff::Engine(k)))
                r.busy_ns[k] += e.end_ns - e.start_ns;
    }
    std::vector<ProfileRow> rows;
    for (auto &[group, r] : by_group)
        rows.push_back(r);
    // In the order the groups finish, each adds the time since the end of those before it.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ProfileRow &a, const ProfileRow &b) { return a.end_ns < b.end_ns; });
    double done = 0;
    for (ProfileRow &r : rows) {
        r.adds_ns = std::max(0.0, r.end_ns - done);
        done = std::max(done, r.end_ns);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow &a, const ProfileRow &b) {
        return a.adds_ns > b.adds_ns;
    });
    return rows;
}

std::string profile_table(const std::vector<TraceEvent> &events, size_t rows) {
    std::vector<ProfileRow> all = profile_rows(events);
    double total = 0;
    for (const ProfileRow &r : all)
        total += r.adds_ns;
    std::string out = "where the time goes (per group of ONNX nodes, in the order they finish, "
                      "each adding the time since the groups before it ended; us):\n";
    char buf[512];
    std::snprintf(buf, sizeof buf, "%10s %6s %10s", "adds", "%", "span");
    out += buf;
    for (int k = 0; k < neff::kNumEngines; k++) {
        std::snprintf(buf, sizeof buf, " %8s", target::engine_name(neff::Engine(k)));
        out += buf;
    }
    out += "  dma-queue  group\n";
    double rest = 0;
    for (size_t i = 0; i < all.size(); i++) {
        const ProfileRow &r = all[i];
        if (i >= rows) {
            rest += r.adds_ns;
            continue;
        }
        std::snprintf(buf, sizeof buf, "%10.3f %5.1f%% %10.3f", r.adds_ns / 1000.0,
                      total > 0 ? 100.0 * r.adds_ns / total : 0.0,
                      (r.end_ns - r.start_ns) / 1000.0);
        out += buf;
        for (int k = 0; k < neff::kNumEngines; k++) {
            std::snprintf(buf, sizeof buf, " %8.3f", r.busy_ns[k] / 1000.0);
            out += buf;
        }
        std::snprintf(buf, sizeof buf, " %10.3f  ", r.dma_queue_ns / 1000.0);
        out += buf + r.group + "\n";
    }
    if (all.size() > rows) {
        std::snprintf(buf, sizeof buf, "%10.3f %5.1f%%  in %zu more groups\n", rest / 1000.0,
                      total > 0 ? 100.0 * rest / total : 0.0, all.size() - rows);
        out += buf;
    }
    return out;
}

} // namespace nhc::rt
