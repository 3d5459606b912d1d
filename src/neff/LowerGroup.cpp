#include "neff/LowerGroup.h"

#include "support/Error.h"

#include <cstdlib>
#include <iostream>
#include <set>

namespace nhc::codegen {

namespace {

// Records the body Halide hands to custom passes (once, the whole Stmt) and changes nothing.
class CaptureStmt : public Halide::Internal::IRMutator {
public:
    using IRMutator::mutate;
    Halide::Internal::Stmt captured;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override {
        captured = s;
        return s;
    }
};

/** The group's Funcs: staged inputs, the algorithm's stages, the outputs. */
std::vector<Halide::Internal::Function> group_functions(const sched::Group &g) {
    std::vector<Halide::Internal::Function> fs;
    for (const sched::GroupInput &in : g.inputs)
        fs.push_back(in.staged.function());
    for (const alg::Stage &s : g.op.stages)
        fs.push_back(s.func.function());
    for (const sched::GroupOutput &o : g.outputs)
        fs.push_back(o.func.function());
    return fs;
}

/** The loops a schedule unrolls are lowered as serial loops and marked Unrolled again in the
 *  captured Stmt; instruction selection unrolls them itself, one iteration after the other. Halide
 *  would copy the body once per iteration into a chain of Blocks that its passes walk
 *  recursively: a fused loop of 32,768 iterations unrolled overflowed the stack (a segfault). For
 *  the loops of a stage s of Func f, Halide's names are `f.s<s>.<var>` (`f$1.s<s>...` for a
 *  copy of f, where Halide makes one). While alive, the group's unrolled dims are serial. */
class SerialUnrolls : public Halide::Internal::IRMutator {
public:
    explicit SerialUnrolls(const sched::Group &g) : fs_(group_functions(g)) {
        for (Halide::Internal::Function &f : fs_)
            for (int s = 0; s <= static_cast<int>(f.updates().size()); s++)
                for (Halide::Internal::Dim &d : dims(f, s))
                    if (d.for_type == Halide::Internal::ForType::Unrolled) {
                        d.for_type = Halide::Internal::ForType::Serial;
                        names_.insert(f.name() + ".s" + std::to_string(s) + "." + d.var);
                    }
    }
    ~SerialUnrolls() override {
        for (Halide::Internal::Function &f : fs_)
            for (int s = 0; s <= static_cast<int>(f.updates().size()); s++)
                for (Halide::Internal::Dim &d : dims(f, s))
                    if (names_.count(f.name() + ".s" + std::to_string(s) + "." + d.var))
                        d.for_type = Halide::Internal::ForType::Unrolled;
    }

    using IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override {
        Halide::Internal::Stmt body = mutate(op->body);
        bool unrolled = names_.count(op->name) || names_.count(without_copy_suffix(op->name));
        if (!unrolled && body.same_as(op->body))
            return op;
        return Halide::Internal::For::make(
            op->name, op->min, op->extent,
            unrolled ? Halide::Internal::ForType::Unrolled : op->for_type, op->device_api, body);
    }

private:
    static std::vector<Halide::Internal::Dim> &dims(Halide::Internal::Function &f, int s) {
        return (s == 0 ? f.definition() : f.update(s - 1)).schedule().dims();
    }
    /** `f$1.s0.v1` -> `f.s0.v1`: the loops of a copy Halide made of f. */
    static std::string without_copy_suffix(const std::string &loop) {
        size_t dollar = loop.find('$'), dot = loop.find(".s");
        if (dollar == std::string::npos || dot == std::string::npos || dollar > dot)
            return loop;
        return loop.substr(0, dollar) + loop.substr(dot);
    }

    std::vector<Halide::Internal::Function> fs_;
    std::set<std::string> names_;
};

} // namespace

LoweredGroup lower_group(const sched::Group &g) {
    std::vector<Halide::Func> outputs;
    LoweredGroup lg;
    lg.partition_dim = g.partition_dim;
    lg.partition_split = g.partition_split;
    lg.buffers = g.buffers;
    lg.pe_critical_path = g.pe_critical_path;
    for (const auto &[stage, name] : g.engines) {
        neff::Engine e;
        bool known = neff::parse_engine(name, e);
        nhc_assert(known,
                   "engine '" << name << "' of stage " << stage << " passed the script check");
        lg.engines[stage] = e;
    }
    lg.resident = g.resident;
    for (const alg::Stage &s : g.op.stages)
        if (s.stored_as)
            lg.stored_as[s.func.name()] = *s.stored_as;
    for (const alg::Stage &s : g.op.stages)
        if (s.widens_to_tile)
            lg.widened_reductions.insert(s.func.name());
    for (const sched::GroupOutput &o : g.outputs) {
        outputs.push_back(o.func);
        lg.hbm_buffers[o.func.name()] = o.value;
        // A 16-bit output's resident tiles are kept in its type, half the SBUF of fp32 ones:
        // the engines that write them round as the store would have (RNE, nc.md:L247, L309; as
        // NarrowStores.h makes them do after the fact). The one output of a group is its last
        // node's: nothing else in the group reads it.
        std::string kept = o.result.func.name();
        if (g.outputs.size() == 1 && g.resident.count(kept) && !lg.stored_as.count(kept) &&
            (o.result.dtype == DType::BFloat16 || o.result.dtype == DType::Float16) &&
            o.result.func.output_types() == std::vector<Halide::Type>{Halide::Float(32)})
            lg.stored_as[kept] = o.result.dtype;
    }
    std::vector<Halide::Argument> args;
    for (const sched::GroupInput &in : g.inputs) {
        args.push_back(in.param);
        lg.hbm_buffers[in.param.name()] = in.value;
    }
    Halide::Pipeline p(outputs);
    CaptureStmt capture;
    p.add_custom_lowering_pass(&capture, nullptr);
    SerialUnrolls unrolls(g);
    // A CompileError here is a bug in a default schedule; it propagates as an internal error.
    p.compile_to_module(args, "group", Halide::Target("x86-64-linux-no_asserts-no_bounds_query"));
    nhc_assert(capture.captured.defined(),
               "the capture pass did not run for " << g.node->describe());
    lg.body = unrolls.mutate(capture.captured);
    // NHC_DUMP_STMT=1 prints every group's lowered Stmt: the input of instruction selection.
    if (const char *dump = std::getenv("NHC_DUMP_STMT"); dump && *dump == '1')
        std::cerr << "// lowered Stmt of " << g.node->describe() << "\n" << lg.body << "\n";
    struct Names : Halide::Internal::IRVisitor {
        std::set<std::string> names;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Load *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Halide::Internal::Store *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
    } names;
    lg.body.accept(&names);
    for (const auto &[buf, value] : lg.hbm_buffers)
        if (names.names.count(buf))
            lg.referenced.insert(buf);
    return lg;
}

LoweredGroup rebound(LoweredGroup lg, const std::vector<std::string> &from,
                     const std::vector<std::string> &to) {
    nhc_assert(from.size() == to.size(), "groups of one workload with " << from.size() << " and "
                                                                        << to.size()
                                                                        << " HBM values");
    std::map<std::string, std::string> value_of; // the first group's value -> the other's
    for (size_t i = 0; i < from.size(); i++) {
        auto [at, fresh] = value_of.emplace(from[i], to[i]);
        nhc_assert(fresh || at->second == to[i],
                   "value '" << from[i] << "' is two values of a group of its workload");
    }
    for (auto &[buffer, value] : lg.hbm_buffers) {
        auto v = value_of.find(value);
        nhc_assert(v != value_of.end(), "HBM buffer '" << buffer << "' of value '" << value
                                                       << "' is not among its group's values");
        value = v->second;
    }
    return lg;
}

} // namespace nhc::codegen
