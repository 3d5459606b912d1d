#include "driver/HostPartition.h"

#include "frontend/ConstantEvaluator.h"
#include "frontend/InferShapes.h"
#include "frontend/Subgraphs.h"
#include "graph/DType.h"
#include "graph/OperatorSupport.h"
#include "runtime/HostSegment.h"
#include "support/Error.h"

#include <map>
#include <set>

namespace nhc {

namespace {

enum class Where { Device, Host, Nowhere };

/** Node `index`'s name as the front end's import names it (its ONNX name, else <op>_<index>). */
std::string node_name(const onnx::GraphProto &g, int index) {
    const onnx::NodeProto &n = g.node(index);
    return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

class Partitioner {
public:
    explicit Partitioner(const LoadedModel &model)
        : model_(model), g_(model.proto.graph()), types_(collect_value_types(g_)) {
        for (const auto &t : g_.initializer())
            initializers_[t.name()] = &t;
        for (const auto &vi : g_.value_info())
            infos_[vi.name()] = &vi;
        for (const auto &vi : g_.input())
            infos_[vi.name()] = &vi;
        for (const auto &vi : g_.output())
            infos_[vi.name()] = &vi;
    }

    std::vector<ModelSegment> run() {
        // Inputs of unknown size (--input-shape fixes them) and values of types the compiler
        // does not hold (strings, sequences) keep the front end's own errors, which say what to
        // do. Control flow (If, Loop) runs on the host; its subgraphs' types are checked there.
        for (const auto &vi : g_.input())
            if (!is_static(vi.name()))
                return {};
        for (const auto &[name, type] : types_)
            if (!type.is_tensor || (type.elem_type != 0 && !dtype_from_onnx(type.elem_type)))
                return {};
        std::vector<Where> where = place_nodes();
        bool any_host = false;
        for (Where w : where)
            any_host |= w == Where::Host;
        if (!any_host)
            return {};
        std::vector<int> segment_of = assign_segments(where);
        int count = 0;
        for (int s : segment_of)
            count = std::max(count, s + 1);
        std::vector<ModelSegment> segments;
        for (int s = 0; s < count; s++) {
            std::vector<int> nodes;
            for (int n = 0; n < g_.node_size(); n++)
                if (segment_of[size_t(n)] == s)
                    nodes.push_back(n);
            if (!nodes.empty())
                segments.push_back(make_segment(nodes, segment_of, int(segments.size())));
        }
        take_unread_inputs(segments);
        return segments;
    }

    /** A model input no node reads (an expanded CastLike's `like`, whose type alone counted)
     *  is still the model's: the first host segment takes it and ignores it, so the runtime
     *  knows its type and takes it from the caller. */
    void take_unread_inputs(std::vector<ModelSegment> &segments) const {
        std::set<std::string> read;
        for (const ModelSegment &seg : segments)
            read.insert(seg.inputs.begin(), seg.inputs.end());
        for (ModelSegment &seg : segments) {
            if (!seg.on_host)
                continue;
            for (const auto &vi : g_.input())
                if (!read.count(vi.name()) && !initializers_.count(vi.name())) {
                    check_carried(vi.name(), "an input");
                    *seg.model.proto.mutable_graph()->add_input() = typed(vi.name());
                    seg.inputs.push_back(vi.name());
                }
            return;
        }
    }

private:
    /** Whether the host evaluates every node of `n`'s subgraphs (If's, Loop's), at any depth:
     *  else the node is refused here, not at run time. */
    static bool host_runs_subgraphs(const onnx::NodeProto &n) {
        for (const auto &a : n.attribute()) {
            std::vector<const onnx::GraphProto *> graphs;
            if (a.has_g())
                graphs.push_back(&a.g());
            for (const auto &sub : a.graphs())
                graphs.push_back(&sub);
            for (const onnx::GraphProto *g : graphs)
                for (const auto &m : g->node())
                    if (!(m.domain().empty() || m.domain() == "ai.onnx") ||
                        !can_evaluate(m.op_type()) || !host_runs_subgraphs(m))
                        return false;
        }
        return true;
    }

    /** The values `n` reads: its inputs, and those its subgraphs capture (If's, Loop's). */
    static std::vector<std::string> reads(const onnx::NodeProto &n) {
        std::vector<std::string> values(n.input().begin(), n.input().end());
        for (const std::string &name : captured_names(n))
            values.push_back(name);
        return values;
    }

    bool is_static(const std::string &value) const {
        if (value.empty() || initializers_.count(value))
            return true;
        auto it = types_.find(value);
        return it != types_.end() && it->second.is_tensor && it->second.elem_type != 0 &&
               it->second.has_shape && it->second.is_static();
    }

    /** Whether the engines can hold `value`'s elements (int64 as int32; not float64, uint64:
     *  the engines have no 64-bit types, NHC_EGEN006, though a NEFF tensor carries them between
     *  host segments). Initializers are the device's concern. */
    bool device_holds(const std::string &value) const {
        if (value.empty() || initializers_.count(value))
            return true;
        auto it = types_.find(value);
        std::optional<DType> dt =
            it == types_.end() ? std::nullopt : dtype_from_onnx(it->second.elem_type);
        bool holds_bool = false;
        std::optional<neff::DType> carried =
            dt ? rt::carrier_dtype(*dt, &holds_bool) : std::nullopt;
        return carried && neff::dtype_on_device(*carried);
    }

    Where place(const onnx::NodeProto &n) const {
        bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
        bool device_values = true; // static shapes, of types the device holds
        for (const auto &v : n.input())
            device_values &= is_static(v) && device_holds(v);
        for (const auto &v : n.output())
            device_values &= is_static(v) && device_holds(v);
        if (device_values && is_supported_operator(default_domain ? "" : n.domain(), n.op_type()))
            return Where::Device;
        return default_domain && can_evaluate(n.op_type()) && host_runs_subgraphs(n)
                   ? Where::Host
                   : Where::Nowhere;
    }

    /** Each node's place; NHC_EUOC002 naming every node that can run nowhere. */
    std::vector<Where> place_nodes() const {
        std::vector<Where> where;
        std::map<std::string, std::vector<std::string>> refused; // op -> node names
        for (int i = 0; i < g_.node_size(); i++) {
            where.push_back(place(g_.node(i)));
            if (where.back() == Where::Nowhere)
                refused[g_.node(i).op_type()].push_back(node_name(g_, i));
        }
        if (!refused.empty())
            refuse_operators(g_.name(), refused,
                             "that neither the device nor the host can run (no device "
                             "implementation, a shape known only at run time or a 64-bit "
                             "float, and no host evaluator for it or a node of its subgraphs)");
        return where;
    }

    /** Segments alternate device (even) and host (odd): a node goes to the first one of its kind
     *  at or after the latest segment of its producers. */
    std::vector<int> assign_segments(const std::vector<Where> &where) const {
        std::map<std::string, int> produced_in;
        std::vector<int> segment_of;
        for (int i = 0; i < g_.node_size(); i++) {
            const onnx::NodeProto &n = g_.node(i);
            int s = 0;
            for (const auto &v : reads(n))
                if (auto it = produced_in.find(v); it != produced_in.end())
                    s = std::max(s, it->second);
            int parity = where[size_t(i)] == Where::Host ? 1 : 0;
            if (s % 2 != parity)
                s++;
            segment_of.push_back(s);
            for (const auto &v : n.output())
                produced_in[v] = s;
        }
        return segment_of;
    }

    onnx::ValueInfoProto typed(const std::string &name) const {
        auto it = infos_.find(name);
        nhc_assert(it != infos_.end(), "value '" << name << "' has no type after inference");
        return *it->second;
    }

    /** NHC_EDTY001 unless a NEFF tensor carries `name` between segments. */
    void check_carried(const std::string &name, const char *role) const {
        int elem = typed(name).type().tensor_type().elem_type();
        std::optional<DType> dt = dtype_from_onnx(elem);
        bool holds_bool = false;
        if (!dt || !rt::carrier_dtype(*dt, &holds_bool))
            user_error("NHC_EDTY001", "value '", name, "' (", role, " of a host segment) has ONNX ",
                       "element type ", elem, ", which no NEFF tensor carries between segments ",
                       "(strings and complex numbers stay inside a segment); cast it before ",
                       "export");
    }

    ModelSegment make_segment(const std::vector<int> &nodes, const std::vector<int> &segment_of,
                              int index) const {
        ModelSegment seg;
        int s = segment_of[size_t(nodes.front())];
        seg.on_host = s % 2 == 1;
        onnx::ModelProto &m = seg.model.proto;
        m.set_ir_version(model_.proto.ir_version());
        *m.mutable_opset_import() = model_.proto.opset_import();
        onnx::GraphProto &g = *m.mutable_graph();
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "_sg%02d", index);
        g.set_name((g_.name().empty() ? "main" : g_.name()) + suffix);
        std::set<std::string> produced, read, initializers;
        for (int n : nodes) {
            onnx::NodeProto *copy = g.add_node();
            *copy = g_.node(n);
            copy->set_name(node_name(g_, n)); // as the device segments name it
            for (const auto &v : reads(g_.node(n)))
                if (!v.empty() && !produced.count(v))
                    (initializers_.count(v) ? initializers : read).insert(v);
            for (const auto &v : g_.node(n).output())
                produced.insert(v);
        }
        for (const std::string &v : read) {
            if (seg.on_host)
                check_carried(v, "an input");
            *g.add_input() = typed(v);
            seg.inputs.push_back(v);
        }
        for (const std::string &name : initializers)
            add_initializer(seg, name);
        for (const std::string &v : outputs_read_later(produced, segment_of, s)) {
            if (seg.on_host)
                check_carried(v, "an output");
            *g.add_output() = typed(v);
            seg.outputs.push_back(v);
        }
        for (const auto &vi : g_.value_info())
            if (produced.count(vi.name()))
                *g.add_value_info() = vi;
        return seg;
    }

    /** The initializer `name` in the segment: a weight the mapped file holds stays there. */
    void add_initializer(ModelSegment &seg, const std::string &name) const {
        const onnx::TensorProto &t = *initializers_.at(name);
        onnx::TensorProto *copy = seg.model.proto.mutable_graph()->add_initializer();
        if (auto it = model_.in_place.find(name); it != model_.in_place.end() && !seg.on_host) {
            *copy = t;
            seg.model.in_place[name] = it->second;
        } else {
            model_.initializer(t).to_onnx(copy, name); // the host segment carries its bytes
        }
    }

    /** Values of `produced` that the graph outputs or a node of a later segment reads, sorted. */
    std::set<std::string> outputs_read_later(const std::set<std::string> &produced,
                                             const std::vector<int> &segment_of, int s) const {
        std::set<std::string> out;
        for (const auto &vi : g_.output())
            if (produced.count(vi.name()))
                out.insert(vi.name());
        for (int n = 0; n < g_.node_size(); n++)
            if (segment_of[size_t(n)] > s)
                for (const auto &v : reads(g_.node(n)))
                    if (produced.count(v))
                        out.insert(v);
        return out;
    }

    const LoadedModel &model_;
    const onnx::GraphProto &g_;
    std::map<std::string, ValueType> types_;
    std::map<std::string, const onnx::TensorProto *> initializers_;
    std::map<std::string, const onnx::ValueInfoProto *> infos_;
};

} // namespace

std::vector<ModelSegment> partition_for_host(const LoadedModel &model) {
    return Partitioner(model).run();
}

void check_device_operators(const LoadedModel &model) {
    std::map<std::string, std::vector<std::string>> missing; // op -> node names
    const onnx::GraphProto &g = model.proto.graph();
    for (int i = 0; i < g.node_size(); i++) {
        const onnx::NodeProto &n = g.node(i);
        bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
        if (!is_supported_operator(default_domain ? "" : n.domain(), n.op_type()))
            missing[(default_domain ? "" : n.domain() + ".") + n.op_type()].push_back(
                node_name(g, i));
    }
    if (!missing.empty())
        refuse_operators(model.proto.graph().name(), missing,
                         "that the device does not run (--fallback none)");
}

std::string describe_partition(const std::vector<ModelSegment> &segments) {
    std::string s;
    for (const ModelSegment &seg : segments) {
        const onnx::GraphProto &g = seg.model.proto.graph();
        std::map<std::string, int> ops;
        for (const auto &n : g.node())
            ops[n.op_type()]++;
        s += "\n  " + g.name() + (seg.on_host ? " on the host: " : " on the device: ") +
             std::to_string(g.node_size()) + " node(s) (";
        bool first = true;
        for (const auto &[op, count] : ops) {
            s += (first ? "" : ", ") + op + (count > 1 ? " x" + std::to_string(count) : "");
            first = false;
        }
        s += ")";
    }
    return s;
}

} // namespace nhc
