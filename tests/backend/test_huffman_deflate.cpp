// Raw deflate with Huffman codes alone (neff/HuffmanDeflate): what zlib's inflate reads back,
// as small as zlib's own Huffman-only coding, pieces that concatenate into one stream.
#include <doctest/doctest.h>

#include "neff/HuffmanDeflate.h"

#include <cstring>
#include <zlib.h>

using namespace nhc;

namespace {

/** Inflates a raw deflate stream; `ended` says whether it ended with a final block. */
std::vector<uint8_t> inflate_raw(const std::vector<uint8_t> &in, size_t expected, bool &ended,
                                 bool &consumed) {
    z_stream s{};
    REQUIRE(inflateInit2(&s, -15) == Z_OK);
    std::vector<uint8_t> out(expected + 1024);
    s.next_in = const_cast<Bytef *>(in.data());
    s.avail_in = uInt(in.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    int rc = inflate(&s, Z_SYNC_FLUSH);
    ended = rc == Z_STREAM_END;
    consumed = (rc == Z_OK || rc == Z_STREAM_END) && s.avail_in == 0;
    out.resize(out.size() - s.avail_out);
    inflateEnd(&s);
    return out;
}

std::vector<uint8_t> zlib_huffman_only(const std::vector<uint8_t> &in) {
    z_stream s{};
    REQUIRE(deflateInit2(&s, 1, Z_DEFLATED, -15, 8, Z_HUFFMAN_ONLY) == Z_OK);
    std::vector<uint8_t> out(deflateBound(&s, uLong(in.size())) + 16);
    s.next_in = const_cast<Bytef *>(in.data());
    s.avail_in = uInt(in.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
    out.resize(out.size() - s.avail_out);
    deflateEnd(&s);
    return out;
}

/** bf16 values near-normal with scale 0.02, as a trained layer's weights. */
std::vector<uint8_t> weight_bytes(size_t size, uint32_t seed) {
    std::vector<uint8_t> w(size);
    uint32_t x = seed;
    for (size_t i = 0; i + 1 < size; i += 2) {
        double u = 0;
        for (int k = 0; k < 12; k++) {
            x = x * 1103515245u + 12345u;
            u += double((x >> 8) & 0xffff) / 65536.0;
        }
        float f = float((u - 6.0) * 0.02);
        uint32_t bits = 0;
        std::memcpy(&bits, &f, 4);
        w[i] = uint8_t(bits >> 16);
        w[i + 1] = uint8_t(bits >> 24);
    }
    return w;
}

/** Byte k repeated 2^k times, 65,535 bytes (one block): with the end-of-block symbol, an
 *  unlimited Huffman tree would be 16 deep, one bit more than deflate allows. */
std::vector<uint8_t> skewed_bytes() {
    std::vector<uint8_t> v;
    for (int k = 0; k < 16; k++)
        v.insert(v.end(), size_t(1) << k, uint8_t(k));
    return v;
}

} // namespace

TEST_CASE("Huffman-only deflate: zlib reads back every kind of data, ended or flushed") {
    std::vector<std::vector<uint8_t>> inputs = {
        {}, {7}, std::vector<uint8_t>(100000, 0), skewed_bytes()};
    for (size_t size : {size_t(2), neff::kHuffmanBlockBytes - 1, neff::kHuffmanBlockBytes,
                        neff::kHuffmanBlockBytes * 3 + 5})
        inputs.push_back(weight_bytes(size, uint32_t(size)));
    std::vector<uint8_t> random(300000);
    uint32_t x = 99;
    for (uint8_t &b : random) {
        x = x * 1103515245u + 12345u;
        b = uint8_t(x >> 16);
    }
    inputs.push_back(random);
    for (const std::vector<uint8_t> &in : inputs) {
        for (bool last : {true, false}) {
            CAPTURE(in.size());
            CAPTURE(last);
            std::vector<uint8_t> out;
            neff::deflate_huffman_only(in.data(), in.size(), last, out);
            bool ended = false, consumed = false;
            CHECK(inflate_raw(out, in.size(), ended, consumed) == in);
            CHECK(consumed);
            CHECK(ended == last);
            if (!last) { // a sync flush: the empty stored block's bytes end the piece
                REQUIRE(out.size() >= 4);
                CHECK(std::vector<uint8_t>(out.end() - 4, out.end()) ==
                      std::vector<uint8_t>{0, 0, 0xff, 0xff});
            }
        }
    }
}

TEST_CASE("Huffman-only deflate: pieces concatenate into one stream, appended to what is there") {
    const std::vector<uint8_t> a = weight_bytes(100000, 1), b = skewed_bytes();
    std::vector<uint8_t> out = {0xaa};
    neff::deflate_huffman_only(a.data(), a.size(), false, out);
    neff::deflate_huffman_only(b.data(), b.size(), true, out);
    CHECK(out[0] == 0xaa);
    std::vector<uint8_t> whole = a;
    whole.insert(whole.end(), b.begin(), b.end());
    bool ended = false, consumed = false;
    CHECK(inflate_raw(std::vector<uint8_t>(out.begin() + 1, out.end()), whole.size(), ended,
                      consumed) == whole);
    CHECK(ended);
    CHECK(consumed);
}

TEST_CASE("Huffman-only deflate: as small as zlib's Huffman-only coding, deterministic") {
    const std::vector<uint8_t> w = weight_bytes(size_t(1) << 20, 5);
    std::vector<uint8_t> ours, again;
    neff::deflate_huffman_only(w.data(), w.size(), true, ours);
    neff::deflate_huffman_only(w.data(), w.size(), true, again);
    CHECK(ours == again);
    const size_t zlibs = zlib_huffman_only(w).size();
    CHECK(double(ours.size()) <= 1.01 * double(zlibs));
    CHECK(ours.size() < w.size() * 9 / 10); // the exponent bytes shrink
}
