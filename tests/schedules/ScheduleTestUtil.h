#ifndef NHC_TESTS_SCHEDULES_SCHEDULETESTUTIL_H
#define NHC_TESTS_SCHEDULES_SCHEDULETESTUTIL_H

// Helpers of the schedule-script tests: one-node graphs, the user error code a call raises, and
// scripted groups compiled to a program and run on the simulator (the path of
// src/driver/Codegen.cpp for one node, with a script instead of the default schedule).

#include "OneNodeGraph.h"
#include "neff/InsertSemaphores.h"
#include "neff/LowerGroup.h"
#include "neff/SelectGroup.h"
#include "neff/SelectInstructions.h"
#include "runtime/Runtime.h"
#include "schedules/DefaultSchedule.h"
#include "schedules/ScheduleScript.h"
#include "support/Error.h"

#include <cstring>
#include <doctest/doctest.h>
#include <functional>
#include <map>

namespace nhc::test {

/** The code of the UserError `f` throws, "no error" if none; the message goes to `message`. */
inline std::string error_code(const std::function<void()> &f, std::string *message = nullptr) {
    try {
        f();
    } catch (const UserError &e) {
        if (message)
            *message = e.what();
        return e.code();
    }
    return "no error";
}

/** A group of the graph's only node, scheduled by `script` (or by default if it is empty). */
inline sched::Group scheduled_group(const Graph &g, const std::string &script) {
    sched::Group grp = sched::build_node_group(g, g.nodes[0]);
    if (script.empty()) {
        sched::apply_default_schedule(grp, target::target_by_name("trn1"));
    } else {
        sched::ScheduleScript s = sched::parse_schedule(script, "test.sched");
        REQUIRE(sched::apply_schedule_script(s, grp));
    }
    return grp;
}

struct Compiled {
    std::vector<codegen::SelectedInstr> instrs;
    neff::Program program;
    std::vector<std::pair<int64_t, int64_t>> kept_sbuf; ///< resident stages' regions

    int count(neff::Opcode op) const {
        int n = 0;
        for (const codegen::SelectedInstr &i : instrs)
            n += i.instr.op == op;
        return n;
    }
};

inline neff::Variable variable(const Graph &g, const std::string &value, neff::VarKind kind) {
    neff::Variable v;
    v.name = value;
    v.kind = kind;
    v.shape = g.value(value).shape;
    return v;
}

/** Lowers and selects a scheduled group, then builds the program as Codegen.cpp does. */
inline Compiled compile_group(const Graph &g, sched::Group &grp) {
    Compiled c;
    c.program.target = "trn1";
    codegen::LoweredGroup lg = codegen::lower_group(grp);
    codegen::SelectOptions so;
    so.target = &target::target_by_name("trn1");
    so.node_name = g.nodes[0].name;
    std::map<std::string, int> var_of;
    for (const std::string &v : g.inputs) {
        var_of[v] = static_cast<int>(c.program.vars.size());
        c.program.vars.push_back(variable(g, v, neff::VarKind::Input));
    }
    for (const std::string &v : g.outputs) {
        var_of[v] = static_cast<int>(c.program.vars.size());
        c.program.vars.push_back(variable(g, v, neff::VarKind::Output));
    }
    // The group's options as code generation sets them, each HBM value an fp32 variable.
    c.instrs = codegen::select_group(lg, so, [&](const std::string &value) {
        return codegen::HbmBinding{var_of.at(value), neff::DType::F32,
                                   c.program.vars.at(size_t(var_of.at(value))).size_bytes()};
    });
    c.kept_sbuf = so.kept_sbuf;
    std::vector<codegen::SelectedInstr> copy = c.instrs;
    codegen::insert_semaphores(copy, c.program);
    c.program.layout_hbm();
    return c;
}

/** Runs a compiled one-node program on the simulator: fp32 inputs in, fp32 output out. */
inline std::vector<float> run(const Compiled &c, const Graph &g,
                              const std::map<std::string, std::vector<float>> &inputs) {
    std::map<std::string, rt::Tensor> in;
    for (const auto &[name, data] : inputs) {
        rt::Tensor t;
        t.dtype = neff::DType::F32;
        t.shape = g.value(name).shape;
        t.data.resize(data.size() * sizeof(float));
        std::memcpy(t.data.data(), data.data(), t.data.size());
        in[name] = t;
    }
    std::unique_ptr<rt::Model> m = rt::Model::load_program(c.program);
    rt::ExecOptions o;
    o.check_races = true; // every compiled program must be race-free (issue 14)
    rt::ExecResult r = m->execute(in, o);
    const rt::Tensor &out = r.outputs.at(g.outputs[0]);
    std::vector<float> v(out.data.size() / sizeof(float));
    std::memcpy(v.data(), out.data.data(), out.data.size());
    return v;
}

/** Gemm [M=64, K=256] x [K, N=512]: the schedule tests' matmul. */
inline Graph gemm_graph() {
    return one_node_graph("Gemm", {{64, 256}, {256, 512}}, {64, 512});
}

/** A block for gemm_graph() with final0 tiled by `tile` (e.g. `tile(v0, v1, no, mo, ni, mi, 512,
 *  64)`, the N loop named `no`), K in chunks of 128, then `extra` lines (the docs' first example
 *  without the bias, which this Gemm has not). */
inline std::string gemm_block(const std::string &tile, const std::string &extra = "") {
    return "node \"node\":\n"
           "  final0." +
           tile +
           "\n"
           "  acc.compute_at(final0, no).store_in(PSUM)\n"
           "  acc.update().split(k, ko, ki, 128).reorder(ki, v0, v1, ko)\n"
           "  lhs_t.compute_at(acc, ko).store_in(SBUF)\n"
           "  rhs.compute_at(acc, ko).store_in(SBUF)\n"
           "  out.compute_at(final0, no).store_in(SBUF)\n"
           "  hint partition_dim lhs_t 1\n"
           "  hint partition_dim rhs 1\n"
           "  hint partition_dim acc 1\n"
           "  hint partition_dim out 1\n" +
           extra;
}

inline std::vector<float> ramp(size_t n, float scale, float offset) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = static_cast<float>((i * 37) % 101) * scale + offset;
    return v;
}

} // namespace nhc::test

#endif
