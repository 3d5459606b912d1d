#include "neff/LowerGroup.h"

#include "support/Error.h"

#include <cstdlib>
#include <iostream>

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

} // namespace

LoweredGroup lower_group(const sched::Group &g) {
    std::vector<Halide::Func> outputs;
    LoweredGroup lg;
    lg.partition_dim = g.partition_dim;
    lg.partition_split = g.partition_split;
    for (const alg::Stage &s : g.op.stages)
        if (s.stored_as)
            lg.stored_as[s.func.name()] = *s.stored_as;
    for (const sched::GroupOutput &o : g.outputs) {
        outputs.push_back(o.func);
        lg.hbm_buffers[o.func.name()] = o.value;
    }
    std::vector<Halide::Argument> args;
    for (const sched::GroupInput &in : g.inputs) {
        args.push_back(in.param);
        lg.hbm_buffers[in.param.name()] = in.value;
    }
    Halide::Pipeline p(outputs);
    CaptureStmt capture;
    p.add_custom_lowering_pass(&capture, nullptr);
    // A CompileError here is a bug in a default schedule; it propagates as an internal error.
    p.compile_to_module(args, "group", Halide::Target("x86-64-linux-no_asserts-no_bounds_query"));
    nhc_assert(capture.captured.defined(),
               "the capture pass did not run for " << g.node->describe());
    lg.body = capture.captured;
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

} // namespace nhc::codegen
