// Rounding on the engines (neff/NarrowStores): which stores of fp32 tiles to 16-bit tensors take
// tiles their writers write in 16 bits, on hand-built instruction lists; then on compiled
// programs, whose values must not change.

#include "E2E.h"
#include "TextCases.h"
#include "neff/NarrowStores.h"

#include <doctest/doctest.h>

using namespace nhc;
using codegen::SelectedInstr;
using neff::AccessPattern;
using IsaType = neff::DType;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;

namespace {

/** Rows [0, 64) of a [64, 256] bf16 HBM variable 0, columns [col0, col0 + cols). */
AccessPattern hbm_bf16(int col0, int cols) {
    AccessPattern a;
    a.space = MemSpace::HBM;
    a.dtype = IsaType::BF16;
    a.var = 0;
    a.num_partitions = 64;
    a.partition_step = 256 * 2;
    a.offset = col0 * 2;
    a.dims = {{2, cols}};
    return a;
}

AccessPattern tile(int64_t byte_offset, int cols, IsaType t = IsaType::F32) {
    AccessPattern a;
    a.space = MemSpace::SBUF;
    a.dtype = t;
    a.num_partitions = 64;
    a.offset = byte_offset;
    a.dims = {{1, cols}};
    return a;
}

SelectedInstr on(Engine e, neff::Opcode op, const AccessPattern &dst,
                 const AccessPattern &src = {}) {
    Instr i;
    i.op = op;
    i.dst = dst;
    i.src = src;
    return {e, i};
}

SelectedInstr store(int64_t byte_offset, int cols) {
    return on(Engine::SP, neff::Opcode::Dma, hbm_bf16(0, cols), tile(byte_offset, cols));
}

const AccessPattern kInput = tile(8192, 256); // what the writers compute from

} // namespace

TEST_CASE("a tile one engine wrote and a DMA rounds to bf16 is written in bf16 instead") {
    std::vector<SelectedInstr> v = {
        on(Engine::ACT, neff::Opcode::Activation, tile(1024, 256), kInput), store(1024, 256)};
    CHECK(codegen::narrow_stores(v) == 1);
    CHECK(v[0].instr.dst.dtype == IsaType::BF16);
    CHECK(v[0].instr.dst.offset == 1024);
    CHECK(v[1].instr.src.dtype == IsaType::BF16);
    CHECK(v[1].instr.src.offset == 1024);
}

TEST_CASE("two writers of a tile's halves are both narrowed, the second moved to its bf16 place") {
    std::vector<SelectedInstr> v = {
        on(Engine::DVE, neff::Opcode::TensorCopy, tile(1024, 128), kInput),
        on(Engine::ACT, neff::Opcode::Activation, tile(1024 + 128 * 4, 128), kInput),
        store(1024, 256)};
    CHECK(codegen::narrow_stores(v) == 1);
    CHECK(v[0].instr.dst.offset == 1024);
    CHECK(v[1].instr.dst.offset == 1024 + 128 * 2);
    CHECK(v[1].instr.dst.dtype == IsaType::BF16);
}

TEST_CASE("a store is left rounding in the DMA when the tile is read by another instruction, "
          "written by a DMA or the PE, or only partly written") {
    SelectedInstr write = on(Engine::ACT, neff::Opcode::Activation, tile(1024, 256), kInput);
    SelectedInstr read =
        on(Engine::DVE, neff::Opcode::TensorCopy, tile(4096, 256), tile(1024, 256));
    // Read between the writer and the store (as the next stage's operand).
    std::vector<SelectedInstr> between = {write, read, store(1024, 256)};
    CHECK(codegen::narrow_stores(between) == 0);
    // Read after the store before anything writes the bytes again.
    std::vector<SelectedInstr> after = {write, store(1024, 256), read};
    CHECK(codegen::narrow_stores(after) == 0);
    CHECK(after[0].instr.dst.dtype == IsaType::F32);
    // Written by a DMA (a load), not an engine.
    std::vector<SelectedInstr> loaded = {
        on(Engine::SP, neff::Opcode::Dma, tile(1024, 256), hbm_bf16(0, 256)), store(1024, 256)};
    loaded[0].instr.src.dtype = IsaType::BF16;
    CHECK(codegen::narrow_stores(loaded) == 0);
    // Only the first half written since: the rest holds older bytes.
    std::vector<SelectedInstr> half = {
        on(Engine::ACT, neff::Opcode::Activation, tile(1024, 128), kInput), store(1024, 256)};
    CHECK(codegen::narrow_stores(half) == 0);
}

TEST_CASE("after the store, reads of bytes written again are not the tile's; a copy that rounds "
          "to bf16 as the store does reads the narrowed tile") {
    SelectedInstr write = on(Engine::ACT, neff::Opcode::Activation, tile(1024, 256), kInput);
    // The bytes written again in two halves (the next group's tile), then read whole.
    std::vector<SelectedInstr> reused = {
        write, store(1024, 256), on(Engine::DVE, neff::Opcode::Memset, tile(1024, 128)),
        on(Engine::DVE, neff::Opcode::Memset, tile(1024 + 128 * 4, 128)),
        on(Engine::DVE, neff::Opcode::TensorCopy, tile(4096, 256), tile(1024, 256))};
    CHECK(codegen::narrow_stores(reused) == 1);
    CHECK(reused[4].instr.src.dtype == IsaType::F32); // reads the new bytes, as they are
    // ForwardStores' copy of the stored tile into a bf16 tile: it now reads bf16.
    std::vector<SelectedInstr> forwarded = {write, store(1024, 256),
                                            on(Engine::POOL, neff::Opcode::TensorCopy,
                                               tile(4096, 256, IsaType::BF16), tile(1024, 256))};
    CHECK(codegen::narrow_stores(forwarded) == 1);
    CHECK(forwarded[2].instr.src.dtype == IsaType::BF16);
    // A copy to fp32 would read values the tile no longer holds.
    std::vector<SelectedInstr> widening = {
        write, store(1024, 256),
        on(Engine::POOL, neff::Opcode::TensorCopy, tile(4096, 256), tile(1024, 256))};
    CHECK(codegen::narrow_stores(widening) == 0);
}

TEST_CASE("rounding on the engines changes no value: a bf16 two-layer program at -O1 and -O2") {
    // h, read only by the second matmul, is stored as bf16 under auto-cast (a rounding store).
    Graph g = test::load_text(test::kMatmulReluMatmul);
    CompileOptions o;
    o.auto_cast = "matmult";
    o.auto_cast_type = "bf16";
    o.keep_resident = false; // h crosses HBM, so the rounded store is what the next reads
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 5), o, "y", [](int level, const neff::Program &p) {
            // Stores of bf16 SBUF tiles to bf16 HBM: the narrowed ones, at -O2 only.
            int narrowed = 0;
            for (Engine e : {Engine::PE, Engine::ACT, Engine::DVE, Engine::POOL, Engine::SP})
                for (const Instr &i : p.stream(e))
                    narrowed += i.op == neff::Opcode::Dma && i.src.space == MemSpace::SBUF &&
                                i.dst.space == MemSpace::HBM && i.src.dtype == IsaType::BF16;
            CHECK((narrowed > 0) == (level == 2));
        });
}
