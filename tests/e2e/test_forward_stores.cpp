// Tensors kept in SBUF between groups (neff/ForwardStores): which loads become on-chip copies,
// which stay loads, and which stores are dropped, on hand-built instruction lists; then on
// compiled programs, whose values must not change.

#include "E2E.h"
#include "TextCases.h"
#include "neff/ForwardStores.h"

#include <doctest/doctest.h>

using namespace nhc;
using codegen::SelectedInstr;
using neff::AccessPattern;
using neff::Engine;
using neff::Instr;
using neff::MemSpace;

namespace {

/** Variable 0 is a scratch tensor of [64, 256] fp32, variable 1 an output of the same shape. */
neff::Program two_vars() {
    neff::Program p;
    for (auto [name, kind] :
         {std::pair{"t", neff::VarKind::Scratch}, {"y", neff::VarKind::Output}}) {
        neff::Variable v;
        v.name = name;
        v.kind = kind;
        v.shape = {64, 256};
        p.vars.push_back(v);
    }
    return p;
}

/** Rows [row0, row0 + rows) and columns [col0, col0 + cols) of a [64, 256] variable. */
AccessPattern hbm(int var, int row0, int rows, int col0, int cols,
                  neff::DType t = neff::DType::F32) {
    const int64_t es = neff::dtype_size(t);
    AccessPattern a;
    a.space = MemSpace::HBM;
    a.dtype = t;
    a.var = var;
    a.num_partitions = rows;
    a.partition_step = 256 * es;
    a.offset = (row0 * 256 + col0) * es;
    a.dims = {{es, cols}};
    return a;
}

AccessPattern sbuf(int partition, int partitions, int64_t byte_offset, int cols) {
    AccessPattern a;
    a.space = MemSpace::SBUF;
    a.start_partition = partition;
    a.num_partitions = partitions;
    a.offset = byte_offset;
    a.dims = {{1, cols}};
    return a;
}

SelectedInstr dma(const AccessPattern &dst, const AccessPattern &src) {
    Instr i;
    i.op = neff::Opcode::Dma;
    i.dst = dst;
    i.src = src;
    return {Engine::SP, i};
}

SelectedInstr write_on_dve(const AccessPattern &dst) {
    Instr i;
    i.op = neff::Opcode::Memset;
    i.dst = dst;
    return {Engine::DVE, i};
}

/** An ACT instruction that reads `src` (and writes elsewhere). */
SelectedInstr read_on_act(const AccessPattern &src) {
    Instr i;
    i.op = neff::Opcode::Activation;
    i.src = src;
    i.dst = sbuf(0, 64, 65536, 256);
    return {Engine::ACT, i};
}

/** A reader of `tile` and four bytes past it: the tile is not read whole. */
SelectedInstr read_past(AccessPattern tile) {
    tile.dims = {{1, tile.dims[0].num + 1}};
    return read_on_act(tile);
}

/** Whether `s` is GpSimd's copy of `src` into `dst`. */
bool pool_copy(const SelectedInstr &s, const AccessPattern &src, const AccessPattern &dst) {
    return s.engine == Engine::POOL && s.instr.op == neff::Opcode::TensorCopy &&
           s.instr.src == src && s.instr.dst == dst;
}

int count(const std::vector<SelectedInstr> &v, neff::Opcode op, Engine e) {
    int n = 0;
    for (const SelectedInstr &s : v)
        n += s.instr.op == op && s.engine == e;
    return n;
}

} // namespace

TEST_CASE("a load of a tensor still in SBUF goes, its readers read the stored tile, and its store "
          "is dropped") {
    neff::Program p = two_vars();
    std::vector<SelectedInstr> v = {write_on_dve(sbuf(0, 64, 0, 256)),
                                    dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256)),
                                    dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256)),
                                    read_on_act(sbuf(0, 64, 4096 + 512, 64))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.loads_forwarded == 1);
    CHECK(s.read_in_place == 1);
    CHECK(s.copies == 0);
    CHECK(s.stores_dropped == 1);
    REQUIRE(v.size() == 2);
    CHECK(v[1].instr.op == neff::Opcode::Activation);
    CHECK(v[1].instr.src == sbuf(0, 64, 512, 64)); // the same columns of the stored tile
}

TEST_CASE("a forwarded load becomes a copy on GpSimd when its tile is not read whole, or the "
          "stored tile is written before a reader") {
    neff::Program p = two_vars();
    const SelectedInstr store = dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256));
    const SelectedInstr load = dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256));
    std::vector<SelectedInstr> past = {store, load, read_past(sbuf(0, 64, 4096, 256))};
    codegen::ForwardStats s = codegen::forward_stores(past, p);
    CHECK(s.loads_forwarded == 1);
    CHECK(s.read_in_place == 0);
    REQUIRE(past.size() == 2);
    CHECK(pool_copy(past[0], sbuf(0, 64, 0, 256), sbuf(0, 64, 4096, 256)));
    CHECK(past[1].instr.src == read_past(sbuf(0, 64, 4096, 256)).instr.src); // as it was
    std::vector<SelectedInstr> overwritten = {store, load, write_on_dve(sbuf(0, 64, 0, 4)),
                                              read_on_act(sbuf(0, 64, 4096, 256))};
    s = codegen::forward_stores(overwritten, p);
    CHECK(s.read_in_place == 0);
    CHECK(s.copies == 1);
    // An instruction accumulating into the loaded tile reads it as its accumulator.
    SelectedInstr accumulate = read_on_act(sbuf(0, 64, 65536, 256));
    accumulate.instr.accum = sbuf(0, 64, 4096, 1);
    std::vector<SelectedInstr> accumulated = {store, load, accumulate};
    s = codegen::forward_stores(accumulated, p);
    CHECK(s.read_in_place == 0);
    CHECK(s.copies == 1);
}

TEST_CASE("a write to a loaded tile ends it: only the readers before it read the stored tile") {
    neff::Program p = two_vars();
    std::vector<SelectedInstr> v = {
        dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256)),
        dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256)), read_on_act(sbuf(0, 64, 4096, 256)),
        write_on_dve(sbuf(0, 64, 4096, 16)), read_on_act(sbuf(0, 64, 4096, 16))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.read_in_place == 1);
    REQUIRE(v.size() == 3);
    CHECK(v[0].instr.src == sbuf(0, 64, 0, 256));
    CHECK(v[2].instr.src == sbuf(0, 64, 4096, 16)); // reads what the write put there
}

TEST_CASE("a store that rounds an fp32 tile to a 16-bit tensor nothing reads from HBM is kept "
          "for NarrowStores, then dropped; while something reads the tensor it stays") {
    neff::Program p = two_vars();
    p.vars[0].dtype = neff::DType::BF16; // auto-cast's bf16 copy of an fp32 result
    const SelectedInstr store = dma(hbm(0, 0, 64, 0, 256, neff::DType::BF16), sbuf(0, 64, 0, 256));
    REQUIRE(store.instr.src.dtype == neff::DType::F32);
    std::vector<SelectedInstr> unread = {write_on_dve(sbuf(0, 64, 0, 256)), store,
                                         read_on_act(sbuf(0, 64, 0, 256))};
    CHECK(codegen::forward_stores(unread, p).stores_dropped == 0);
    REQUIRE(unread.size() == 3);
    CHECK(codegen::drop_unread_stores(unread, p, /*casting_too=*/false) == 0);
    CHECK(codegen::drop_unread_stores(unread, p, /*casting_too=*/true) == 1);
    REQUIRE(unread.size() == 2);
    CHECK(unread[1].instr.op == neff::Opcode::Activation);
    // Read back by a DMA into other partitions (not forwarded): the store stays.
    std::vector<SelectedInstr> read = {
        write_on_dve(sbuf(0, 64, 0, 256)), store,
        dma(sbuf(64, 32, 4096, 256), hbm(0, 0, 32, 0, 256, neff::DType::BF16))};
    CHECK(codegen::forward_stores(read, p).loads_forwarded == 0);
    CHECK(codegen::drop_unread_stores(read, p, true) == 0);
    CHECK(read.size() == 3);
}

TEST_CASE("in a window of a program, a forwarded tensor's store stays: later groups may read it") {
    neff::Program p = two_vars();
    std::vector<SelectedInstr> v = {
        write_on_dve(sbuf(0, 64, 0, 256)), dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256)),
        dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256)), read_past(sbuf(0, 64, 4096, 256))};
    codegen::ForwardStats s = codegen::forward_stores(v, p, /*drop_unread_stores=*/false);
    CHECK(s.loads_forwarded == 1);
    CHECK(s.stores_dropped == 0);
    REQUIRE(v.size() == 4);
    CHECK(v[1].instr.op == neff::Opcode::Dma); // the store
    CHECK(v[2].instr.op == neff::Opcode::TensorCopy);
}

TEST_CASE("a load served by two stores' column halves becomes two copies") {
    neff::Program p = two_vars();
    // Columns [0, 128) from tile A at byte 0, [128, 256) from tile B at byte 2048; the load
    // takes rows 32..63, columns 64..191, into partitions 32..63.
    std::vector<SelectedInstr> v = {dma(hbm(0, 0, 64, 0, 128), sbuf(0, 64, 0, 128)),
                                    dma(hbm(0, 0, 64, 128, 128), sbuf(0, 64, 2048, 128)),
                                    dma(sbuf(32, 32, 8192, 128), hbm(0, 32, 32, 64, 128))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.loads_forwarded == 1);
    CHECK(s.copies == 2);
    REQUIRE(v.size() == 2); // both stores dropped
    CHECK(v[0].instr.src == sbuf(32, 32, 64 * 4, 64));
    CHECK(v[0].instr.dst == sbuf(32, 32, 8192, 64));
    CHECK(v[1].instr.src == sbuf(32, 32, 2048, 64));
    CHECK(v[1].instr.dst == sbuf(32, 32, 8192 + 64 * 4, 64));
    // Rows 16..47 into partitions 16..47 would be copies no engine can make: 32 partitions start
    // at a multiple of 32 (target::partition_start_allowed).
    std::vector<SelectedInstr> unaligned = {dma(hbm(0, 0, 64, 0, 128), sbuf(0, 64, 0, 128)),
                                            dma(hbm(0, 0, 64, 128, 128), sbuf(0, 64, 2048, 128)),
                                            dma(sbuf(16, 32, 8192, 128), hbm(0, 16, 32, 64, 128))};
    CHECK(codegen::forward_stores(unaligned, p).loads_forwarded == 0);
}

TEST_CASE("loads stay loads when the tiles were overwritten, or partitions or types differ") {
    neff::Program p = two_vars();
    const SelectedInstr st = dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256));
    const SelectedInstr ld = dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256));
    auto forwarded = [&](std::vector<SelectedInstr> v) {
        return codegen::forward_stores(v, p).loads_forwarded;
    };
    CHECK(forwarded({st, ld}) == 1);
    // The stored tile is written again before the load: the bytes in SBUF are not the tensor's.
    CHECK(forwarded({st, write_on_dve(sbuf(32, 8, 512, 4)), ld}) == 0);
    // A write elsewhere on chip changes nothing.
    CHECK(forwarded({st, write_on_dve(sbuf(0, 64, 8192, 256)), ld}) == 1);
    // Loaded onto bytes of the stored tile itself (shifted by 512 bytes): not an in-place copy.
    CHECK(forwarded({st, dma(sbuf(0, 64, 512, 256), hbm(0, 0, 64, 0, 256))}) == 0);
    // Loaded onto other partitions: an engine cannot move it there.
    CHECK(forwarded({st, dma(sbuf(64, 64, 4096, 256), hbm(0, 0, 64, 0, 256))}) == 0);
    // Cast on both sides (fp32 -> bf16 stored, bf16 -> fp32 loaded): not one copy's rounding.
    const AccessPattern t16 = hbm(0, 0, 64, 0, 256, neff::DType::BF16);
    SelectedInstr st16 = dma(t16, sbuf(0, 64, 0, 256)), ld16 = dma(sbuf(0, 64, 4096, 256), t16);
    CHECK(forwarded({st16, ld16}) == 0);
    // Cast on one side only: the copy makes it.
    ld16.instr.dst.dtype = neff::DType::BF16;
    CHECK(forwarded({st16, ld16}) == 1);
    // Only a part of the load was stored: the rest is whatever HBM held.
    CHECK(forwarded({dma(hbm(0, 0, 32, 0, 256), sbuf(0, 32, 0, 256)), ld}) == 0);
    // An output variable is not forwarded.
    SelectedInstr st_y = st, ld_y = ld;
    st_y.instr.dst.var = 1;
    ld_y.instr.src.var = 1;
    CHECK(forwarded({st_y, ld_y}) == 0);
}

TEST_CASE("a store stays while a load of its tensor is not forwarded") {
    neff::Program p = two_vars();
    std::vector<SelectedInstr> v = {dma(hbm(0, 0, 64, 0, 256), sbuf(0, 64, 0, 256)),
                                    dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256)),
                                    dma(sbuf(64, 64, 4096, 256), hbm(0, 0, 64, 0, 256))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.loads_forwarded == 1);
    CHECK(s.read_in_place == 1);
    CHECK(s.stores_dropped == 0);
    CHECK(count(v, neff::Opcode::Dma, Engine::SP) == 2);
}

TEST_CASE("a graph input loaded again while its first load's tiles are intact is copied on chip") {
    neff::Program p = two_vars();
    p.vars[0].kind = neff::VarKind::Input; // X, read by Q, K and V
    const SelectedInstr first = dma(sbuf(0, 64, 0, 256), hbm(0, 0, 64, 0, 256));
    const SelectedInstr again = dma(sbuf(0, 64, 4096, 256), hbm(0, 0, 64, 0, 256));
    std::vector<SelectedInstr> v = {first, again, read_past(sbuf(0, 64, 4096, 256))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.repeated_loads_forwarded == 1);
    CHECK(s.loads_forwarded == 0);
    REQUIRE(v.size() == 3);
    CHECK(v[0].instr.op == neff::Opcode::Dma);
    CHECK(pool_copy(v[1], sbuf(0, 64, 0, 256), sbuf(0, 64, 4096, 256)));
    auto forwarded = [&](std::vector<SelectedInstr> w) {
        return codegen::forward_stores(w, p).repeated_loads_forwarded;
    };
    // The first tile written over in between: the second load stays.
    CHECK(forwarded({first, write_on_dve(sbuf(0, 64, 512, 4)), again}) == 0);
    // Both loads round fp32 to bf16: the first tile holds the second's values.
    SelectedInstr first16 = first, again16 = again;
    first16.instr.dst.dtype = again16.instr.dst.dtype = neff::DType::BF16;
    CHECK(forwarded({first16, again16}) == 1);
    // The first rounded to bf16, the second loads fp32: the tile lacks the bits it needs.
    CHECK(forwarded({first16, again}) == 0);
    // The first exact, the second rounds: the copy rounds as the load would.
    CHECK(forwarded({first, again16}) == 1);
    // One partition at partition 8: a DMA may land there, an engine's copy may not (a tile of
    // one partition starts at a multiple of 32, target::partition_start_allowed).
    SelectedInstr first8 = dma(sbuf(8, 1, 0, 256), hbm(0, 8, 1, 0, 256));
    SelectedInstr again8 = dma(sbuf(8, 1, 4096, 256), hbm(0, 8, 1, 0, 256));
    CHECK(forwarded({first8, again8}) == 0);
    // A weight's loads stay loads.
    p.vars[0].kind = neff::VarKind::Weight;
    CHECK(forwarded({first, again}) == 0);
}

TEST_CASE("a row broadcast to every partition again is copied from the first broadcast's tile") {
    // Attention's mask: one row of a scratch tensor, loaded into all 64 partitions once per head.
    neff::Program p = two_vars();
    AccessPattern row = hbm(0, 0, 64, 0, 256);
    row.partition_step = 0; // every partition reads row 0
    const SelectedInstr store = dma(hbm(0, 0, 1, 0, 256), sbuf(0, 1, 0, 256));
    const SelectedInstr first = dma(sbuf(0, 64, 4096, 256), row);
    const SelectedInstr again = dma(sbuf(0, 64, 8192, 256), row);
    std::vector<SelectedInstr> v = {store, first, again, read_past(sbuf(0, 64, 8192, 256))};
    codegen::ForwardStats s = codegen::forward_stores(v, p);
    CHECK(s.repeated_loads_forwarded == 1);
    REQUIRE(v.size() == 4);
    CHECK(pool_copy(v[2], sbuf(0, 64, 4096, 256), sbuf(0, 64, 8192, 256)));
    // Stored again in between: the first tile holds the old row.
    std::vector<SelectedInstr> rewritten = {store, first, store, again};
    CHECK(codegen::forward_stores(rewritten, p).repeated_loads_forwarded == 0);
    // Into other partitions: no engine copy gets it there.
    SelectedInstr elsewhere = again;
    elsewhere.instr.dst.start_partition = 64;
    std::vector<SelectedInstr> moved = {store, first, elsewhere};
    CHECK(codegen::forward_stores(moved, p).repeated_loads_forwarded == 0);
}

TEST_CASE("between two Gemms the hidden tensor stays in SBUF, and the values do not change") {
    Graph g = test::load_text(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[128, 256] x, float[256, 256] w1, float[256, 384] w2) => (float[128, 384] y) {
  h = MatMul(x, w1)
  r = Relu(h)
  y = MatMul(r, w2)
}
)");
    auto inputs = test::random_inputs(g, 5);
    auto want = alg::run_reference(g, inputs);
    CompileOptions resident, not_resident;
    not_resident.keep_resident = false;
    Graph passed = g;
    apply_graph_passes(passed, resident);
    neff::Program with = generate_program(passed, resident);
    neff::Program without = generate_program(passed, not_resident);
    int hbm_reads_with = 0, hbm_reads_without = 0;
    for (const neff::Variable &v : with.vars)
        if (v.kind == neff::VarKind::Scratch) {
            hbm_reads_with += test::dmas_reading(with, v.name);
            hbm_reads_without += test::dmas_reading(without, v.name);
        }
    CHECK(hbm_reads_without > 0);
    CHECK(hbm_reads_with == 0);
    int forwarded = 0;
    resident.loads_kept_resident = &forwarded;
    generate_program(passed, resident);
    CHECK(forwarded > 0);
    // Both race-free (run_program checks races) and equal to the reference.
    for (neff::Program *p : {&with, &without}) {
        test::E2EResult got = test::run_program(*p, passed, inputs);
        CHECK(test::compare(got.outputs.at("y"), want.at("y"), 1e-5, 1e-5).rel_l2 < 1e-6);
    }
}

TEST_CASE("a tensor auto-cast rounds to bf16 and its reader takes on chip is never stored; its "
          "writer rounds it") {
    // h, read only by the second matmul, is auto-cast's bf16 operand: the first group's tile of it
    // is fp32 until NarrowStores has the Relu write bf16, and the second reads it where it is.
    Graph g = test::load_text(test::kMatmulReluMatmul);
    CompileOptions o;
    o.auto_cast = "matmult";
    o.auto_cast_type = "bf16";
    test::require_same_values_at_o1_and_o2(
        g, test::random_inputs(g, 5), o, "y", [](int level, const neff::Program &p) {
            int stores = 0, rounding_copies = 0;
            for (Engine e : {Engine::PE, Engine::ACT, Engine::DVE, Engine::POOL, Engine::SP})
                for (const Instr &i : p.stream(e)) {
                    stores += i.op == neff::Opcode::Dma && i.dst.space == MemSpace::HBM &&
                              i.dst.var >= 0 &&
                              p.vars[static_cast<size_t>(i.dst.var)].kind == neff::VarKind::Scratch;
                    rounding_copies += e == Engine::POOL && i.src.space == MemSpace::SBUF &&
                                       i.src.dtype == neff::DType::F32 &&
                                       i.dst.dtype == neff::DType::BF16;
                }
            if (level == 2) { // -O1 stores h and loads it back
                CHECK(stores == 0);
                CHECK(rounding_copies == 0);
            }
        });
}
