// Schedule scripts: the node names of the blocks checked against the graphs the code generator
// compiles (ScheduleScript.h's check_schedule_nodes): one graph, or the device segments of a
// model compiled with host fallback.

#include "schedules/ScheduleScript.h"

#include "support/Error.h"

#include <algorithm>
#include <set>

namespace nhc::sched {

namespace {

size_t edit_distance(const std::string &a, const std::string &b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

/** Why a node is compiled without a schedule (so a block for it would be ignored), or "". */
std::string unscheduled_form(const Node &n) {
    if (n.op_type == "Im2Col")
        return "the im2col gather of a lowered convolution is compiled as DMAs, without a schedule";
    if (!n.domain.empty())
        return "";
    if (n.op_type == "Concat")
        return "Concat is compiled as copies of each input into its slice of the output, without "
               "a schedule";
    if (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" ||
        n.op_type == "Unsqueeze" || n.op_type == "Identity")
        return n.op_type + " is a view of its input's bytes: no instruction, nothing to schedule";
    return "";
}

/** The nodes of `g` whose names extend `onnx_name` (the nodes a graph pass made of it). */
std::string nodes_made_of(const Graph &g, const std::string &onnx_name) {
    std::string made;
    for (const Node &n : g.nodes)
        if (n.name.rfind(onnx_name + "__", 0) == 0 && unscheduled_form(n).empty())
            made += (made.empty() ? "\"" : ", \"") + n.name + "\"";
    return made;
}

void check_block_node(const ScheduleScript &s, const ScriptBlock &b, const std::string &name,
                      const Graph &g, const std::map<std::string, std::string> &onnx_ops) {
    std::string best;
    size_t best_d = std::string::npos;
    for (const Node &n : g.nodes) {
        if (n.name == name) {
            if (std::string why = unscheduled_form(n); !why.empty())
                user_error("NHC_ESCH118", s.file, ":", b.line, ": node \"", name, "\": ", why,
                           b.nodes.size() == 1 ? "; remove its block"
                                               : "; remove it from the block");
            return;
        }
        size_t d = edit_distance(n.name, name);
        if (d < best_d)
            best_d = d, best = n.name;
    }
    if (auto op = onnx_ops.find(name); op != onnx_ops.end()) {
        std::string made = nodes_made_of(g, name);
        user_error("NHC_ESCH110", s.file, ":", b.line, ": node \"", name, "\" (", op->second,
                   ") is rewritten by the graph passes (fused into a pattern, or a convolution "
                   "lowered to a matmul); schedule the nodes it becomes",
                   made.empty() ? std::string(" (--dump-schedules lists every node compiled)")
                                : ": " + made);
    }
    user_error("NHC_ESCH110", s.file, ":", b.line, ": node \"", name, "\" is not in the model",
               best.empty() ? std::string() : "; the closest node name is \"" + best + "\"");
}

/** Whether a block may name `name` in this segment: a node compiled, or one the passes rewrote
 *  (check_block_node says which). */
bool segment_names(const SegmentNodes &seg, const std::string &name) {
    return seg.onnx_ops->count(name) ||
           std::any_of(seg.graph->nodes.begin(), seg.graph->nodes.end(),
                       [&](const Node &n) { return n.name == name; });
}

/** A node no device segment compiles: a host segment's, or none (with the closest name). */
[[noreturn]] void refuse_unplaced(const ScheduleScript &s, const ScriptBlock &b,
                                  const std::string &name,
                                  const std::vector<SegmentNodes> &segments,
                                  const std::map<std::string, std::string> &host_ops) {
    if (auto op = host_ops.find(name); op != host_ops.end())
        user_error("NHC_ESCH110", s.file, ":", b.line, ": node \"", name, "\" (", op->second,
                   ") runs on the host (host fallback), not on the device: it has no schedule; "
                   "remove it from the script");
    Graph all; // every device node, for check_block_node's closest name
    std::map<std::string, std::string> onnx_ops;
    for (const SegmentNodes &seg : segments) {
        all.nodes.insert(all.nodes.end(), seg.graph->nodes.begin(), seg.graph->nodes.end());
        onnx_ops.insert(seg.onnx_ops->begin(), seg.onnx_ops->end());
    }
    check_block_node(s, b, name, all, onnx_ops);
    nhc_assert(false, "node " << name << " is in no segment but check_block_node found it");
}

} // namespace

void check_schedule_nodes(const ScheduleScript &s, const Graph &g,
                          const std::map<std::string, std::string> &onnx_ops) {
    for (const ScriptBlock &b : s.blocks)
        for (const std::string &name : b.nodes)
            check_block_node(s, b, name, g, onnx_ops);
}

void check_schedule_nodes(const ScheduleScript &s, const std::vector<SegmentNodes> &segments,
                          const std::map<std::string, std::string> &host_ops) {
    for (const ScriptBlock &b : s.blocks) {
        const std::string &first = b.nodes.front();
        auto home = std::find_if(segments.begin(), segments.end(), [&](const SegmentNodes &seg) {
            return segment_names(seg, first);
        });
        if (home == segments.end())
            refuse_unplaced(s, b, first, segments, host_ops);
        for (const std::string &name : b.nodes) {
            if (!segment_names(*home, name)) {
                bool elsewhere =
                    std::any_of(segments.begin(), segments.end(),
                                [&](const auto &seg) { return segment_names(seg, name); });
                if (!elsewhere)
                    refuse_unplaced(s, b, name, segments, host_ops);
                user_error("NHC_ESCH110", s.file, ":", b.line, ": node \"", name,
                           "\" is compiled in another device segment than \"", first,
                           "\" (host fallback splits the model between them); the nodes of a "
                           "block must be compiled together");
            }
            check_block_node(s, b, name, *home->graph, *home->onnx_ops);
        }
    }
}

} // namespace nhc::sched
