// The autoscheduler's cost model against the simulator (neff/ScheduleInstructions'
// replay_estimate, issue 16): a scheduled program replayed in its order, each instruction charged
// the simulator's own cost query (neff/ComputeCost) and the DMA engines taken by transfers as they
// are issued, takes the simulated time.
#include "neff/ComputeCost.h"
#include "neff/InsertSemaphores.h"
#include "neff/ReplaySchedule.h"
#include "neff/ScheduleInstructions.h"
#include "runtime/Simulator.h"

#include <doctest/doctest.h>

using namespace nhc;
using codegen::SelectedInstr;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;

namespace {

constexpr int64_t kRow = 2048;  ///< x, y and p: bf16 elements per partition
constexpr int64_t kBig = 16384; ///< b: bf16 elements per partition

neff::Variable bf16_var(const std::string &name, neff::VarKind kind, int64_t elems) {
    neff::Variable v;
    v.name = name;
    v.kind = kind;
    v.dtype = neff::DType::BF16;
    v.shape = {128, elems};
    return v;
}

AccessPattern hbm(int var, int64_t elems) {
    AccessPattern a;
    a.space = neff::MemSpace::HBM;
    a.dtype = neff::DType::BF16;
    a.var = var;
    a.num_partitions = 128;
    a.partition_step = elems * 2;
    a.dims = {{2, elems}};
    return a;
}

AccessPattern sbuf(int64_t byte_offset, int64_t elems) {
    AccessPattern a;
    a.space = neff::MemSpace::SBUF;
    a.dtype = neff::DType::BF16;
    a.num_partitions = 128;
    a.offset = byte_offset;
    a.dims = {{1, elems}};
    return a;
}

Instr dma(const AccessPattern &dst, const AccessPattern &src, int queue) {
    Instr i;
    i.op = neff::Opcode::Dma;
    i.dst = dst;
    i.src = src;
    i.queue = queue;
    return i;
}

// Per partition, in bytes: x at 0, y after it, b after y, p after b, q after p.
constexpr int64_t kX = 0, kY = 2 * kRow, kB = 4 * kRow, kP = kB + 2 * kBig, kQ = kP + 2 * kRow;

Instr bf16_add() {
    Instr add;
    add.op = neff::Opcode::TensorTensor;
    add.alu0 = neff::AluOp::Add;
    add.src = add.src1 = sbuf(kX, kRow);
    add.dst = sbuf(kY, kRow);
    return add;
}

Instr copy(const AccessPattern &dst, const AccessPattern &src) {
    Instr c;
    c.op = neff::Opcode::Activation;
    c.dst = dst;
    c.src = src;
    return c;
}

/** x's chain: load x, y = x + x on VectorE, store y. */
std::vector<SelectedInstr> add_chain() {
    return {{Engine::SP, dma(sbuf(kX, kRow), hbm(0, kRow), 0)},
            {Engine::DVE, bf16_add()},
            {Engine::POOL, dma(hbm(3, kRow), sbuf(kY, kRow), 4)}};
}

/** SP loads a large b and then p, which nothing here reads (another group's prefetches); GpSimd
 *  zeroes a tile, then loads x (in its own stream, so issued once the memset is done), ScalarE
 *  copies x to q and GpSimd stores q. */
std::vector<SelectedInstr> prefetch_program() {
    Instr zero;
    zero.op = neff::Opcode::Memset;
    zero.dst = sbuf(kY, kRow);
    return {{Engine::SP, dma(sbuf(kB, kBig), hbm(1, kBig), 0)},
            {Engine::SP, dma(sbuf(kP, kRow), hbm(2, kRow), 1)},
            {Engine::POOL, zero},
            {Engine::POOL, dma(sbuf(kX, kRow), hbm(0, kRow), 4)},
            {Engine::ACT, copy(sbuf(kQ, kRow), sbuf(kX, kRow))},
            {Engine::POOL, dma(hbm(4, kRow), sbuf(kQ, kRow), 5)}};
}

double simulated_ns(std::vector<SelectedInstr> instrs) {
    neff::Program p;
    p.target = "trn1";
    p.name = "list_schedule";
    p.vars = {bf16_var("x", neff::VarKind::Input, kRow), bf16_var("b", neff::VarKind::Input, kBig),
              bf16_var("p", neff::VarKind::Input, kRow), bf16_var("y", neff::VarKind::Output, kRow),
              bf16_var("q", neff::VarKind::Output, kRow)};
    codegen::insert_semaphores(instrs, p);
    p.layout_hbm();
    rt::Machine machine(target::target_by_name("trn1"), p, /*functional=*/false);
    return rt::simulate(machine).summary.total_ns;
}

} // namespace

TEST_CASE("the replay estimate of a scheduled program is its simulated time") {
    const target::TargetInfo &trn1 = target::target_by_name("trn1");
    // x's load is issued after the memset, when b (15 us of data) has the DMA engines and p,
    // issued with it at the start, waits behind it: the simulator's engines take transfers as
    // they are issued, so x's data moves after p's, and its copy and q's store after that. The
    // list schedule holds each transfer back until the engines would be free for it, which puts
    // x's load before p (x is needed first); the replay runs the order as the simulator does.
    std::vector<SelectedInstr> o2 = prefetch_program();
    double replayed = 0;
    double listed =
        codegen::schedule_instructions(o2, trn1, /*dependency_overhead=*/true, &replayed);
    double simulated = simulated_ns(o2);
    CHECK(replayed == doctest::Approx(simulated).epsilon(1e-9));
    CHECK(codegen::replay_estimate(o2, trn1) == replayed);
    CHECK(listed < simulated - 1000);

    // x's load, the add and y's store alone: the add is on the critical path. The list schedule
    // charges the bf16 add two passes (estimated_ns), the simulator and the replay one
    // (nc.md:L301).
    std::vector<SelectedInstr> chain = add_chain();
    listed = codegen::schedule_instructions(chain, trn1, true);
    simulated = simulated_ns(chain);
    CHECK(codegen::replay_estimate(chain, trn1) == doctest::Approx(simulated).epsilon(1e-9));
    Instr add = bf16_add();
    double one_pass = target::compute_ns(trn1, neff::compute_query(trn1, Engine::DVE, add));
    CHECK(codegen::estimated_ns(trn1, Engine::DVE, add) == doctest::Approx(2 * one_pass));
    CHECK(listed == doctest::Approx(simulated + one_pass));
}
