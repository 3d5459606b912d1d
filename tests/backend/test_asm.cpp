// Assembly text: print/parse round trip over every opcode, binary encoding round trip, and the
// NHC_EASM errors.

#include "BackendTest.h"

#include "neff/Encoding.h"

using namespace nhc;

namespace {

// Canonical text (as print_program writes it): every opcode and every field kind.
const char *kAllOps = R"(.target trn2
.name all_ops
.option auto_cast="none"
.var x input f32 [128,512]
.var w weight bf16 [128,128]
.var y output f32 [128,512]
.engine pe
  matmul dst=psum.f32[0:128,0][[1,512]] stationary=sbuf.bf16[0:128,0][[1,128]] moving=sbuf.bf16[0:128,256][[1,512]] wait=s0>=2
  matmul dst=psum.f32[0:128,0][[1,512]] stationary=sbuf.bf16[0:128,0][[1,128]] moving=sbuf.bf16[0:128,256][[1,512]] accumulate signal=s1 name="layer0/MatMul"
  transpose dst=psum.f32[0:64,2048][[1,128]] src=sbuf.f32[0:128,4096][[1,64]]
.engine act
  activation dst=sbuf.f32[0:128,8192][[1,512]] src=psum.f32[0:128,0][[1,512]] func=gelu_apprx_tanh scale=0.5 bias=sbuf.f32[0:128,16384][[1,1]] accum=sbuf.f32[0:128,16388][[1,1]] wait=s1>=1
  activation dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,8192][[1,512]] func=prelu alpha=0.100000001
  tensor_scalar dst=sbuf.f32[0:128,8192][[1,512]] src=sbuf.f32[0:128,8192][[1,512]] op0=mult s0=2 op1=add s1=-1.5
  tensor_copy dst=sbuf.bf16[0:128,10240][[1,512]] src=sbuf.f32[0:128,8192][[1,512]]
.engine dve
  tensor_tensor dst=sbuf.f32[0:128,12288][[2,256]] src=sbuf.f32[0:128,8192][[1,256]] src1=sbuf.f32[0:128,8192][[-1,256]] op=max
  tensor_scalar dst=sbuf.f32[0:128,12288][[1,512]] src=sbuf.f32[0:128,12288][[1,512]] op0=divide s0=1 reverse0
  tensor_reduce dst=sbuf.f32[0:128,16392][[1,4]] src=sbuf.f32[0:128,12288][[128,4],[1,128]] op=add axes=1 negate
  memset dst=sbuf.bf16[0:32,0][[1,64]] value=-inf
  select dst=sbuf.f32[0:128,0][[1,8]] pred=sbuf.u8[0:128,100][[1,8]] on_true=sbuf.f32[0:128,200][[1,8]] on_false=sbuf.f32[0:128,300][[1,8]]
.engine pool
  iota dst=sbuf.i32[0:128,20000][[1,64]] pattern=[0,64,[1]]
  affine_select dst=sbuf.f32[0:128,8192][[1,128]] src=sbuf.f32[0:128,8192][[1,128]] pattern=[0,1,[-1]] cmp=is_ge fill=nan
  partition_reduce dst=sbuf.f32[0:1,30000][[1,16]] src=sbuf.f32[0:128,30000][[1,16]] op=max
  nop wait=s2>=1,s3>=4
  dma queue=6 dst=sbuf.f32[0:128,40000][[1,16]] src=hbm.f32[x,0][[64,2048],[4,16]] index=sbuf.i32[0:128,20000][[1,1]]
.engine sp
  dma queue=3 dst=sbuf.f32[0:128,0][[1,512]] src=hbm.f32[x,0][[2048,128],[4,512]] signal=s0
  dma queue=4 dst=sbuf.bf16[0:128,0][[1,128]] src=hbm.bf16[w,0][[0,128],[2,128]] signal=s0
  dma queue=5 dst=hbm.f32[y,0][[2048,128],[4,2],[8,256]] src=sbuf.f32[0:128,8192][[1,512]] wait=s1>=1
)";

} // namespace

TEST_CASE("assembly text round-trips through parse and print") {
    neff::Program p = neff::parse_program(kAllOps);
    CHECK(neff::print_program(p) == kAllOps);
    neff::Program q = neff::parse_program(neff::print_program(p));
    for (int e = 0; e < neff::kNumEngines; e++) {
        CHECK(p.streams[e] == q.streams[e]);
    }
    // Every opcode appears at least once.
    std::vector<bool> seen(neff::kNumOpcodes, false);
    for (const auto &s : p.streams) {
        for (const auto &i : s) {
            seen[size_t(i.op)] = true;
        }
    }
    for (int op = 0; op < neff::kNumOpcodes; op++) {
        CHECK_MESSAGE(seen[size_t(op)], neff::opcode_name(neff::Opcode(op)));
    }
    CHECK(p.options.at("auto_cast") == "none");
    CHECK(p.stream(neff::Engine::PE)[1].name == "layer0/MatMul");
}

TEST_CASE("binary encoding round-trips every engine stream") {
    neff::Program p = neff::parse_program(kAllOps);
    for (int e = 0; e < neff::kNumEngines; e++) {
        auto bytes = neff::encode_stream(neff::Engine(e), p.streams[e]);
        CHECK(neff::decode_stream(bytes, neff::Engine(e), "test") == p.streams[e]);
    }
}

TEST_CASE("binary decoding rejects truncated and corrupt streams") {
    neff::Program p = neff::parse_program(kAllOps);
    auto bytes = neff::encode_stream(neff::Engine::PE, p.stream(neff::Engine::PE));
    for (size_t cut : {size_t(3), size_t(17), bytes.size() / 2, bytes.size() - 1}) {
        std::vector<uint8_t> t(bytes.begin(), bytes.begin() + long(cut));
        CHECK_CODE(neff::decode_stream(t, neff::Engine::PE, "pe.bin"), "NHC_ENEFF007");
    }
    auto bad_op = bytes;
    bad_op[16] = 214; // first opcode byte
    CHECK_CODE(neff::decode_stream(bad_op, neff::Engine::PE, "pe.bin"), "NHC_ENEFF007");
    CHECK_CODE(neff::decode_stream(bytes, neff::Engine::ACT, "pe.bin"), "NHC_ENEFF007");
    auto version = bytes;
    version[4] = 99;
    CHECK_CODE(neff::decode_stream(version, neff::Engine::PE, "pe.bin"), "NHC_ENEFF002");
    auto trailing = bytes;
    trailing.push_back(0);
    CHECK_CODE(neff::decode_stream(trailing, neff::Engine::PE, "pe.bin"), "NHC_ENEFF007");
    // A 64-bit type is a variable's, never an operand's (neff/DType.h).
    std::vector<neff::Instr> wide = p.stream(neff::Engine::PE);
    REQUIRE(wide.front().dst.present());
    wide.front().dst.dtype = neff::DType::F64;
    CHECK_CODE(neff::decode_stream(neff::encode_stream(neff::Engine::PE, wide), neff::Engine::PE,
                                   "pe.bin"),
               "NHC_ENEFF007");
}

TEST_CASE("assembly errors carry codes and line numbers") {
    const std::string head = ".target trn1\n.var x input f32 [4,4]\n.engine dve\n";
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f32[0:4,0][[1,4]] value=\n"),
               "NHC_EASM001");
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f32[0:4,0][[1,4] value=1\n"),
               "NHC_EASM001");
    CHECK_CODE(neff::parse_program("  memset dst=sbuf.f32[0:4,0][[1,4]] value=1\n"),
               "NHC_EASM001"); // before any .engine
    CHECK_CODE(neff::parse_program(head + "  frobnicate dst=sbuf.f32[0:4,0][[1,4]]\n"),
               "NHC_EASM002");
    CHECK_CODE(neff::parse_program(".bogus 1\n"), "NHC_EASM002");
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f32[0:4,0][[1,4]]\n"),
               "NHC_EASM003"); // missing value
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f32[0:4,0][[1,4]] value=1 colour=2\n"),
               "NHC_EASM003");
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f99[0:4,0][[1,4]] value=1\n"),
               "NHC_EASM004");
    CHECK_CODE(neff::parse_program(head + "  memset dst=hbm.f32[nope,0][[16,4],[4,4]] value=1\n"),
               "NHC_EASM004");
    CHECK_CODE(neff::parse_program(".engine tpu\n"), "NHC_EASM004");
    // f64 and u64 are for variables (model I/O, host segments), never an engine's operand.
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.f64[0:4,0][[1,4]] value=1\n"),
               "NHC_EASM004");
    CHECK_CODE(neff::parse_program(head + "  memset dst=sbuf.u64[0:4,0][[1,4]] value=1\n"),
               "NHC_EASM004");
    CHECK_NOTHROW(neff::parse_program(".target trn1\n.var w input f64 [4]\n"));
    CHECK_CODE(neff::parse_program(head + "  matmul dst=psum.f32[0:4,0][[1,4]] "
                                          "stationary=sbuf.f32[0:4,0][[1,4]] "
                                          "moving=sbuf.f32[0:4,0][[1,4]]\n"),
               "NHC_EASM005"); // matmul is a PE instruction
    try {
        neff::parse_program(head + "\n  memset value=1\n");
        FAIL("expected an error");
    } catch (const UserError &e) {
        CHECK(std::string(e.what()).find("line 5") != std::string::npos);
    }
}
