// The NEFF container: header layout, write/read round trip, determinism, and the loader's
// rejections (neuron-compiler.md §4.1).

#include "BackendTest.h"

#include "neff/Archive.h"
#include "neff/DefJson.h"
#include "neff/ParallelGzip.h"

#include <atomic>
#include <cstring>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>
#include <zlib.h>

using namespace nhc;

namespace {

neff::Program sample_program() {
    neff::Program p = neff::parse_program(R"(.target trn1
.name sample
.option optlevel="2"
.var x input f32 [128,64]
.var w weight bf16 [128,64]
.var y output f32 [128,64]
.engine sp
  dma queue=0 dst=sbuf.f32[0:128,0][[1,64]] src=hbm.f32[x,0][[256,128],[4,64]] signal=s0
  dma queue=1 dst=sbuf.bf16[0:128,256][[1,64]] src=hbm.bf16[w,0][[128,128],[2,64]] signal=s0
  dma queue=0 dst=hbm.f32[y,0][[256,128],[4,64]] src=sbuf.f32[0:128,512][[1,64]] wait=s1>=1
.engine dve
  tensor_tensor dst=sbuf.f32[0:128,512][[1,64]] src=sbuf.f32[0:128,0][[1,64]] src1=sbuf.bf16[0:128,256][[1,64]] op=add wait=s0>=2 signal=s1
)");
    p.vars[1].set_bytes(test::bytes_of(neff::DType::BF16, test::random_floats(128 * 64, 7)));
    return p;
}

uint64_t u64_at(const std::vector<uint8_t> &b, size_t off) {
    uint64_t v;
    std::memcpy(&v, b.data() + off, 8);
    return v;
}

/** Re-seals a modified payload with a correct data_size and hash, so that a later check fires. */
std::vector<uint8_t> reseal(std::vector<uint8_t> payload, const std::vector<uint8_t> &orig) {
    neff::NeffHeader h = neff::decode_header(orig.data());
    h.data_size = payload.size();
    llvm::SHA256 s;
    s.update(llvm::ArrayRef<uint8_t>(payload.data(), payload.size()));
    auto d = s.final();
    std::memcpy(h.hash.data(), d.data(), 32);
    auto hb = neff::encode_header(h);
    std::vector<uint8_t> out(hb.size() + payload.size());
    std::memcpy(out.data(), hb.data(), hb.size());
    std::memcpy(out.data() + hb.size(), payload.data(), payload.size());
    return out;
}

std::vector<uint8_t> with_member(const std::vector<uint8_t> &neff, const std::string &name,
                                 const std::string &text) {
    auto m = neff::read_tar(neff.data() + 1024, neff.size() - 1024);
    m[name].assign(text.begin(), text.end());
    return reseal(neff::write_tar(m, true), neff);
}

/** The plain tar of `neff`'s members, `name` replaced by `bytes`, with `name`'s tar header then
 *  declaring `declared` bytes (base-256 past the octal field's 8 GiB, checksum redone). */
std::vector<uint8_t> tar_declaring(const std::vector<uint8_t> &neff, const std::string &name,
                                   std::vector<uint8_t> bytes, uint64_t declared) {
    auto m = neff::read_tar(neff.data() + 1024, neff.size() - 1024);
    m[name] = std::move(bytes);
    std::vector<uint8_t> tar = neff::write_tar(m, false);
    for (size_t at = 0; at + 512 <= tar.size(); at += 512) {
        uint8_t *h = tar.data() + at;
        if (std::string(reinterpret_cast<const char *>(h)) != name)
            continue;
        h[124] = 0x80; // ustar size field, base-256 big-endian (GNU extension libarchive reads)
        for (int i = 11; i >= 1; i--, declared >>= 8)
            h[124 + i] = uint8_t(declared & 0xff);
        std::memset(h + 148, ' ', 8);
        unsigned sum = 0;
        for (int i = 0; i < 512; i++)
            sum += h[i];
        std::snprintf(reinterpret_cast<char *>(h + 148), 8, "%06o", sum);
        return tar;
    }
    FAIL("no tar header for " << name);
    return tar;
}

/** `bytes` as one gzip stream at `level` (0 stores them). */
std::vector<uint8_t> gzip(const std::vector<uint8_t> &bytes, int level) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::vector<uint8_t> out(deflateBound(&z, bytes.size()));
    z.next_in = const_cast<uint8_t *>(bytes.data());
    z.avail_in = uInt(bytes.size());
    z.next_out = out.data();
    z.avail_out = uInt(out.size());
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

} // namespace

TEST_CASE("the header uses the public field layout") {
    std::vector<uint8_t> b = neff::write_neff(sample_program());
    CHECK(u64_at(b, 0) == 1);                // pkg_version: tgz + sha256
    CHECK(u64_at(b, 8) == 1024);             // header_size
    CHECK(u64_at(b, 16) == b.size() - 1024); // data_size
    CHECK(u64_at(b, 24) == neff::kNeffVersionMajor);
    CHECK(std::string(reinterpret_cast<const char *>(b.data() + 40)).rfind("neuron-halide-cc", 0) ==
          0);
    CHECK(std::string(reinterpret_cast<const char *>(b.data() + 220)) == "sample");
    llvm::SHA256 s;
    s.update(llvm::ArrayRef<uint8_t>(b.data() + 1024, b.size() - 1024));
    auto d = s.final();
    CHECK(std::memcmp(b.data() + 172, d.data(), 32) == 0); // sha256 of the payload
    CHECK(b[1024] == 0x1f);                                // gzip by default
    CHECK(b[1025] == 0x8b);
    CHECK(b[1024 + 4] == 0); // gzip MTIME field is zero (deterministic)
    CHECK(b[1024 + 7] == 0);
    uint32_t lnc;
    std::memcpy(&lnc, b.data() + 552, 4);
    CHECK(lnc == 1);
}

TEST_CASE("NEFF write/read round trip, deterministic bytes, plain tar for fast loading") {
    neff::Program p = sample_program();
    std::vector<uint8_t> a = neff::write_neff(p), b = neff::write_neff(p);
    CHECK(a == b);
    neff::NeffContents c = neff::read_neff(a);
    CHECK(c.compressed);
    CHECK(c.program.name == "sample");
    CHECK(c.program.target == "trn1");
    CHECK(c.program.options.at("optlevel") == "2");
    REQUIRE(c.program.vars.size() == 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK(c.program.vars[i].name == p.vars[i].name);
        CHECK(c.program.vars[i].kind == p.vars[i].kind);
        CHECK(c.program.vars[i].shape == p.vars[i].shape);
        CHECK(c.program.vars[i].hbm_offset == p.vars[i].hbm_offset);
    }
    CHECK(c.program.vars[1].bytes() == p.vars[1].bytes());
    for (int e = 0; e < neff::kNumEngines; e++) {
        CHECK(c.program.streams[e] == p.streams[e]);
    }
    CHECK(neff::write_neff(c.program) == a); // read -> write gives the same bytes

    neff::WriteOptions fast;
    fast.compress = false;
    std::vector<uint8_t> plain = neff::write_neff(p, fast);
    CHECK(std::memcmp(plain.data() + 1024 + 257, "ustar", 5) == 0); // a tar a person can list
    neff::NeffContents pc = neff::read_neff(plain);
    CHECK(!pc.compressed);
    CHECK(pc.program.streams == c.program.streams);

    auto members = neff::read_tar(a.data() + 1024, a.size() - 1024);
    for (const char *name :
         {"info.json", "sg00/def.json", "sg00/pe.bin", "sg00/act.bin", "sg00/dve.bin",
          "sg00/pool.bin", "sg00/sp.bin", "sg00/weights/1.bin"}) {
        CHECK_MESSAGE(members.count(name) == 1, name);
    }
    std::string def(members["sg00/def.json"].begin(), members["sg00/def.json"].end());
    CHECK(def.find("\"type\": \"file\"") != std::string::npos); // weights are NEFF file vars
    CHECK(def.find("\"hbm_offset\"") != std::string::npos);
}

namespace {

/** What a standard gzip reader (zlib's inflate with the gzip wrapper, which checks the CRC-32
 *  and the size in the trailer) makes of `gz`; empty and `ok` false if it is not one stream. */
std::vector<uint8_t> gunzip(const std::vector<uint8_t> &gz, bool &ok) {
    z_stream s{};
    REQUIRE(inflateInit2(&s, 16 + 15) == Z_OK);
    std::vector<uint8_t> out(size_t(64) << 20);
    s.next_in = const_cast<Bytef *>(gz.data());
    s.avail_in = uInt(gz.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    int rc = inflate(&s, Z_FINISH);
    ok = rc == Z_STREAM_END && s.avail_in == 0;
    out.resize(out.size() - s.avail_out);
    inflateEnd(&s);
    return out;
}

} // namespace

TEST_CASE("a weight whose bytes are made as read writes the NEFF its bytes held would") {
    // 20 MiB: more than one piece of the writer (16 MiB).
    neff::Program p = sample_program();
    p.vars[1].shape = {128, 80 << 10};
    std::vector<float> values = test::random_floats(128 * (80 << 10), 11);
    auto held =
        std::make_shared<const std::vector<uint8_t>>(test::bytes_of(neff::DType::BF16, values));
    p.vars[1].set_bytes(*held);
    for (bool compress : {true, false}) {
        CAPTURE(compress);
        neff::WriteOptions opt;
        opt.compress = compress;
        const std::vector<uint8_t> expected = neff::write_neff(p, opt);
        neff::Program made = p;
        std::atomic<int> calls{0};
        made.vars[1].make_bytes_when_read(held->size(),
                                          [held, &calls](size_t at, size_t n, uint8_t *dst) {
                                              std::memcpy(dst, held->data() + at, n);
                                              calls++;
                                          });
        CHECK(neff::write_neff(made, opt) == expected);
        CHECK(calls.load() == 2); // a piece at a time: never asked for the whole weight at once
        for (int jobs : {2, 3}) {
            opt.jobs = jobs;
            CHECK(neff::write_neff(made, opt) == expected);
        }
        CHECK(neff::read_neff(expected).program.vars[1].bytes() == ByteView(*held));
    }
}

TEST_CASE("a variable holding an ONNX bool keeps saying so through a NEFF; another element type "
          "is refused") {
    neff::Program p = sample_program();
    neff::Variable flag;
    flag.name = "flag";
    flag.kind = neff::VarKind::Input;
    flag.dtype = neff::DType::U8;
    flag.shape = {4};
    flag.holds_bool = true;
    p.vars.push_back(flag);
    p.layout_hbm();
    std::vector<uint8_t> good = neff::write_neff(p);
    neff::NeffContents c = neff::read_neff(good);
    REQUIRE(c.program.vars.size() == 4);
    CHECK(!c.program.vars[0].holds_bool);
    CHECK(c.program.vars[3].holds_bool);
    // In the assembly text too: neff-dump prints it, neff-as reads it back.
    std::string text = neff::print_program(p);
    CHECK(text.find(".var flag input u8 [4] bool") != std::string::npos);
    CHECK(neff::parse_program(text).vars[3].holds_bool);
    std::string def = neff::make_def_json(p);
    size_t key = def.find("\"element_type\"");
    REQUIRE(key != std::string::npos);
    size_t at = def.find("\"bool\"", key);
    REQUIRE(at != std::string::npos);
    std::string other = def;
    other.replace(at, 6, "\"int4\"");
    std::unique_ptr<rt::Model> m;
    rt::Result r = rt::nrt_load(with_member(good, "sg00/def.json", other), {}, m);
    CHECK(r.code == "NHC_ENEFF006");
    CHECK(r.message.find("element type 'int4'") != std::string::npos);
}

TEST_CASE("gzip in blocks: one standard stream, the same bytes for any job count") {
    // Sizes around the block (empty, one byte, a block less one, one, two less 7 bytes, two and a
    // half): even blocks alternate text and random bytes and are deflated, odd blocks are random
    // and stored, so that blocks finish out of order and either kind can end the stream.
    const size_t block = neff::ParallelGzip::kBlockBytes;
    for (size_t size : {size_t(0), size_t(1), block - 1, block, block * 2 - 7, block * 5 / 2}) {
        std::vector<uint8_t> in(size);
        uint32_t x = 12345;
        for (size_t i = 0; i < size; i++) {
            x = x * 1103515245u + 12345u;
            bool random = (i / block) % 2 || (i / 65536) % 2;
            in[i] = random ? uint8_t(x >> 16) : uint8_t('a' + i % 7);
        }
        std::vector<uint8_t> first;
        for (int jobs : {1, 2, 3, 8}) {
            CAPTURE(size);
            CAPTURE(jobs);
            std::vector<uint8_t> gz;
            neff::ParallelGzip z([&](const uint8_t *b, size_t n) { gz.insert(gz.end(), b, b + n); },
                                 jobs);
            // Written in uneven pieces, as libarchive hands over a tar.
            for (size_t at = 0; at < size;) {
                size_t n = std::min(size - at, size_t(1000003));
                z.write(in.data() + at, n);
                at += n;
            }
            z.finish();
            bool ok = false;
            CHECK(gunzip(gz, ok) == in);
            CHECK(ok);
            if (first.empty())
                first = gz;
            CHECK(gz == first);
        }
    }
}

TEST_CASE("gzip in blocks: bytes deflate cannot shrink by a tenth are stored, text is deflated") {
    const size_t size = neff::ParallelGzip::kBlockBytes * 3 / 2;
    std::vector<uint8_t> random(size), text(size);
    uint32_t x = 777;
    for (size_t i = 0; i < size; i++) {
        x = x * 1103515245u + 12345u;
        random[i] = uint8_t(x >> 16);
        text[i] = uint8_t('a' + i % 7);
    }
    for (const std::vector<uint8_t> *in : {&random, &text}) {
        std::vector<uint8_t> gz;
        neff::ParallelGzip z([&](const uint8_t *b, size_t n) { gz.insert(gz.end(), b, b + n); }, 2);
        z.write(in->data(), in->size());
        z.finish();
        bool ok = false;
        CHECK(gunzip(gz, ok) == *in);
        CHECK(ok);
        if (in == &random) {
            // Stored: the input, a 5-byte header per stored block of at most 65,535 bytes (each
            // 4 MiB block is cut on its own), and the gzip header and trailer (18 bytes).
            size_t headers = 0;
            for (size_t at = 0; at < size; at += neff::ParallelGzip::kBlockBytes) {
                size_t len = std::min(size - at, neff::ParallelGzip::kBlockBytes);
                headers += (len + 65534) / 65535;
            }
            CHECK(gz.size() == size + 5 * headers + 18);
        } else {
            CHECK(gz.size() < size / 100);
        }
    }
}

TEST_CASE("gzip blocks: text keeps string matching, 16-bit weights Huffman codes alone") {
    const size_t size = size_t(1) << 20;
    std::vector<uint8_t> random(size), text(size), weights(size);
    uint32_t x = 4242;
    auto next = [&] {
        x = x * 1103515245u + 12345u;
        return x >> 8;
    };
    for (size_t i = 0; i < size; i++) {
        random[i] = uint8_t(next());
        text[i] = uint8_t("the quick brown fox "[i % 20]);
    }
    // bf16 weights of a trained layer: near-normal values of scale 0.02, whose few exponent
    // bytes shrink under Huffman codes while their strings seldom repeat.
    for (size_t i = 0; i + 1 < size; i += 2) {
        double u = 0;
        for (int k = 0; k < 12; k++) // Irwin-Hall: a near-normal sum
            u += double(next() & 0xffff) / 65536.0;
        float f = float((u - 6.0) * 0.02);
        uint32_t bits = 0;
        std::memcpy(&bits, &f, 4);
        uint16_t b = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16); // to nearest even
        weights[i] = uint8_t(b);
        weights[i + 1] = uint8_t(b >> 8);
    }
    CHECK(neff::block_coding(random) == neff::BlockCoding::Stored);
    CHECK(neff::block_coding(text) == neff::BlockCoding::Matches);
    CHECK(neff::block_coding(weights) == neff::BlockCoding::HuffmanOnly);
    // Written so, the weights still read back, a tenth smaller at least.
    std::vector<uint8_t> gz;
    neff::ParallelGzip z([&](const uint8_t *b, size_t n) { gz.insert(gz.end(), b, b + n); }, 2);
    z.write(weights.data(), weights.size());
    z.finish();
    bool ok = false;
    CHECK(gunzip(gz, ok) == weights);
    CHECK(ok);
    CHECK(gz.size() < size * 9 / 10);
}

TEST_CASE("the loader rejects damaged NEFFs with codes and statuses") {
    std::vector<uint8_t> good = neff::write_neff(sample_program());
    std::unique_ptr<rt::Model> m;

    auto status = [&](const std::vector<uint8_t> &b, const char *code) {
        rt::Result r = rt::nrt_load(b, {}, m);
        CHECK(r.code == code);
        CHECK(m == nullptr);
        return r.status;
    };
    CHECK(rt::nrt_load(good, {}, m).ok());
    CHECK(m != nullptr);

    auto magic = good;
    magic[9] = 0; // header_size 1024 -> 0
    CHECK(status(magic, "NHC_ENEFF001") == rt::NRT_INVALID);
    auto pkg = good;
    pkg[0] = 7;
    CHECK(status(pkg, "NHC_ENEFF001") == rt::NRT_INVALID);

    auto version = good;
    version[24] = 9; // neff_version_major
    CHECK(status(version, "NHC_ENEFF002") == rt::NRT_UNSUPPORTED_NEFF_VERSION);

    auto hash = good;
    hash[good.size() - 5] ^= 0x40; // flip one payload bit
    CHECK(status(hash, "NHC_ENEFF003") == rt::NRT_INVALID);

    std::vector<uint8_t> truncated(good.begin(), good.end() - 100);
    CHECK(status(truncated, "NHC_ENEFF004") == rt::NRT_INVALID);
    std::vector<uint8_t> tiny(good.begin(), good.begin() + 500);
    CHECK(status(tiny, "NHC_ENEFF004") == rt::NRT_INVALID);

    std::vector<uint8_t> junk(good.begin() + 1024, good.end());
    for (auto &x : junk) {
        x = uint8_t(x * 7 + 1);
    }
    CHECK(status(reseal(junk, good), "NHC_ENEFF005") == rt::NRT_INVALID);

    CHECK(status(with_member(good, "sg00/def.json", "{\"var\": 3}"), "NHC_ENEFF006") ==
          rt::NRT_INVALID);
    CHECK(status(with_member(good, "info.json", "not json"), "NHC_ENEFF006") == rt::NRT_INVALID);

    CHECK(status(with_member(good, "sg00/pe.bin", "NHCI"), "NHC_ENEFF007") == rt::NRT_INVALID);

    CHECK(status(with_member(good, "sg00/weights/1.bin", "short"), "NHC_ENEFF011") ==
          rt::NRT_INVALID);

    // A member's header is not trusted for the size of an allocation (issue 19): declaring more
    // than the payload holds, plain or as gzip at deflate's largest expansion, or more than any
    // NeuronCore's HBM, is refused before the bytes are reserved.
    std::vector<uint8_t> weight(16384, 1);
    auto lying_tar = tar_declaring(good, "sg00/weights/1.bin", weight, (uint64_t(1) << 40) + 5);
    auto lying_plain = reseal(lying_tar, good);
    CHECK(status(lying_plain, "NHC_ENEFF014") == rt::NRT_INVALID);
    auto lying_gzip = reseal(gzip(lying_tar, 9), good);
    CHECK(status(lying_gzip, "NHC_ENEFF014") == rt::NRT_INVALID);
    // 20 MB stored (deflate level 0) could hold 20 GB at deflate's largest expansion, but no
    // NeuronCore has 17 GiB of HBM.
    auto stored = gzip(tar_declaring(good, "sg00/weights/1.bin",
                                     std::vector<uint8_t>(size_t(20) << 20, 7), uint64_t(17) << 30),
                       0);
    auto past_hbm = reseal(stored, good);
    CHECK(status(past_hbm, "NHC_ENEFF014") == rt::NRT_INVALID);
    {
        rt::Result r = rt::nrt_load(lying_gzip, {}, m);
        CHECK(r.message.find(
                  "member 'sg00/weights/1.bin' declares 1099511627781 bytes, which with the") !=
              std::string::npos);
    }

    // The file loader, which reads in chunks and skips the weights for timing only, reports
    // the same codes (a flipped payload bit is a hash mismatch although unpacking may fail
    // first), and a weight of the wrong size even when its bytes are skipped.
    std::string path = "test_neff_damaged.neff";
    for (bool timing_only : {false, true}) {
        INFO("timing only: " << timing_only);
        auto file_code = [&](const std::vector<uint8_t> &b) {
            neff::write_file_bytes(path, b);
            rt::LoadOptions lo;
            lo.timing_only = timing_only;
            return rt::nrt_load_file(path, lo, m).code;
        };
        CHECK(file_code(good).empty());
        CHECK(file_code(magic) == "NHC_ENEFF001");
        CHECK(file_code(version) == "NHC_ENEFF002");
        CHECK(file_code(hash) == "NHC_ENEFF003");
        CHECK(file_code(truncated) == "NHC_ENEFF004");
        CHECK(file_code(tiny) == "NHC_ENEFF004");
        CHECK(file_code(reseal(junk, good)) == "NHC_ENEFF005");
        CHECK(file_code(with_member(good, "sg00/weights/1.bin", "short")) == "NHC_ENEFF011");
        CHECK(file_code(lying_plain) == "NHC_ENEFF014");
        CHECK(file_code(lying_gzip) == "NHC_ENEFF014");
        CHECK(file_code(past_hbm) == "NHC_ENEFF014");
    }
    std::remove(path.c_str());
    CHECK(rt::nrt_load_file("/nonexistent/dir/model.neff", {}, m).code == "NHC_ENEFF010");
}

TEST_CASE("a model loaded for timing only holds no weights, times like a full load, and refuses "
          "a functional run (NHC_ERT021)") {
    std::string path = "test_neff_timing_only.neff";
    neff::write_file_bytes(path, neff::write_neff(sample_program()));
    std::unique_ptr<rt::Model> full, timing;
    rt::LoadOptions lo;
    REQUIRE(rt::nrt_load_file(path, lo, full).ok());
    lo.timing_only = true;
    REQUIRE(rt::nrt_load_file(path, lo, timing).ok());
    std::remove(path.c_str());
    CHECK(full->program().vars[1].bytes().size() == 128 * 64 * 2);
    CHECK(full->program().vars[1].bytes() == sample_program().vars[1].bytes());
    CHECK(timing->program().vars[1].bytes().empty());
    CHECK(!timing->program().weights_loaded);
    rt::ExecOptions eo;
    eo.timing_only = true;
    rt::ExecResult a, b;
    REQUIRE(rt::nrt_execute(*full, {}, eo, a).ok());
    REQUIRE(rt::nrt_execute(*timing, {}, eo, b).ok());
    CHECK(a.summary.total_ns == b.summary.total_ns);
    rt::Tensor x{neff::DType::F32, {128, 64}, std::vector<uint8_t>(128 * 64 * 4)};
    CHECK(rt::nrt_execute(*timing, {{"x", x}}, {}, b).code == "NHC_ERT021");
    CHECK(rt::nrt_execute(*full, {{"x", x}}, {}, a).ok());
}

TEST_CASE("the loader rejects a stream that reads out of bounds, the wrong engine or target") {
    neff::Program p = sample_program();
    // Row step of 257 floats: the last row ends past the end of x.
    p.stream(neff::Engine::SP)[0].src.partition_step = 260;
    std::unique_ptr<rt::Model> m;
    rt::Result r = rt::nrt_load(neff::write_neff(p), {}, m);
    CHECK(r.code == "NHC_ENEFF008");
    CHECK(r.status == rt::NRT_INVALID);
    CHECK(r.message.find("sp instruction 0 (dma) operand src") != std::string::npos);

    neff::Program q = sample_program();
    q.stream(neff::Engine::SP)[2].dst.offset = -4;
    CHECK(rt::nrt_load(neff::write_neff(q), {}, m).code == "NHC_ENEFF008");

    neff::Program e = sample_program();
    e.stream(neff::Engine::PE).push_back(e.stream(neff::Engine::DVE)[0]); // DVE op on the PE
    CHECK(rt::nrt_load(neff::write_neff(e), {}, m).code == "NHC_ENEFF012");

    rt::LoadOptions trn2;
    trn2.target = "trn2";
    r = rt::nrt_load(neff::write_neff(sample_program()), trn2, m);
    CHECK(r.code == "NHC_ENEFF009");
    neff::Program alien = sample_program();
    alien.target = "inf1";
    CHECK(rt::nrt_load(neff::write_neff(alien), {}, m).code == "NHC_ENEFF009");
}

TEST_CASE("file helpers report unreadable paths") {
    CHECK_CODE(neff::read_file_bytes("/nonexistent/dir/model.neff"), "NHC_ENEFF010");
    CHECK_CODE(neff::write_file_bytes("/nonexistent/dir/model.neff", {1, 2}), "NHC_ENEFF010");
}
