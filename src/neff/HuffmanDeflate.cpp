#include "neff/HuffmanDeflate.h"

#include "support/Error.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace nhc::neff {

namespace {

constexpr int kLiteralSymbols = 257; // bytes 0-255 and end-of-block (256), RFC 1951 3.2.5
constexpr int kEndOfBlock = 256;
constexpr int kMaxCodeBits = 15;       // RFC 1951 3.2.7: literal/length codes
constexpr int kMaxLengthCodeBits = 7;  // code lengths are sent in 3 bits
constexpr int kLengthCodeSymbols = 19; // 0-15 lengths, 16-18 repeats
// RFC 1951 3.2.7: the order in which the code-length code's lengths are sent.
constexpr std::array<int, kLengthCodeSymbols> kLengthCodeOrder = {
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "BitWriter stores its buffer as is");

/** Bits packed least significant first (RFC 1951 3.1.1) into a buffer sized beforehand with 8
 *  bytes to spare. A flush leaves fewer than 8 bits, so three codes of at most 15 bits can be
 *  added before the next (52 of the buffer's 64). */
class BitWriter {
public:
    explicit BitWriter(uint8_t *at) : at_(at) {}
    void add(uint32_t bits, int count) {
        buffer_ |= uint64_t(bits) << filled_;
        filled_ += count;
    }
    /** Writes the whole bytes of the buffer (all 8 are stored, the pointer moves past the whole
     *  ones). */
    void flush() {
        std::memcpy(at_, &buffer_, 8);
        at_ += filled_ >> 3;
        buffer_ >>= filled_ & ~7;
        filled_ &= 7;
    }
    void put(uint32_t bits, int count) {
        add(bits, count);
        flush();
    }
    /** Pads the last byte with zero bits. */
    void align() {
        flush();
        if (filled_ > 0)
            at_++;
        buffer_ = 0;
        filled_ = 0;
    }
    void byte(uint8_t b) { *at_++ = b; } // only when aligned
    uint8_t *at() const { return at_; }

private:
    uint8_t *at_;
    uint64_t buffer_ = 0;
    int filled_ = 0;
};

/** Huffman code lengths of at most `limit` bits for the counts; 0 for an unused symbol. Ties go
 *  to the lower symbol, and to a leaf before a merged node, so the lengths depend on the counts
 *  alone. Where the tree is too deep the counts are halved (kept above zero) and the tree built
 *  again: a few bits of optimality, only for extreme skew. A lone used symbol gets a partner, as
 *  deflate's decoders take only complete codes. */
std::vector<int> code_lengths(std::vector<uint64_t> counts, int limit) {
    const int n = int(counts.size());
    std::vector<int> lengths(size_t(n), 0);
    int used = int(std::count_if(counts.begin(), counts.end(), [](uint64_t c) { return c > 0; }));
    if (used < 2) {
        for (int s = 0; s < n && used < 2; s++)
            if (counts[size_t(s)] == 0) {
                counts[size_t(s)] = 1;
                used++;
            }
    }
    for (;;) {
        // Leaves by (count, symbol), then two queues: the merged nodes come out in the order
        // they were made, which is by weight, so the two lightest are at the queues' fronts.
        std::vector<std::pair<uint64_t, int>> leaves;
        for (int s = 0; s < n; s++)
            if (counts[size_t(s)] > 0)
                leaves.push_back({counts[size_t(s)], s});
        std::sort(leaves.begin(), leaves.end());
        std::vector<int> parent(size_t(2 * n), -1);
        std::vector<uint64_t> merged_weight;
        size_t leaf = 0, merged = 0;
        auto lightest = [&]() {
            if (leaf < leaves.size() &&
                (merged == merged_weight.size() || leaves[leaf].first <= merged_weight[merged]))
                return std::pair<uint64_t, int>(leaves[leaf++]);
            merged++;
            return std::pair<uint64_t, int>(merged_weight[merged - 1], n + int(merged - 1));
        };
        for (size_t made = 0; made + 1 < leaves.size(); made++) {
            auto a = lightest(), b = lightest();
            parent[size_t(a.second)] = parent[size_t(b.second)] = n + int(made);
            merged_weight.push_back(a.first + b.first);
        }
        int deepest = 0;
        for (int s = 0; s < n; s++) {
            int depth = 0;
            if (counts[size_t(s)] > 0)
                for (int v = s; parent[size_t(v)] >= 0; v = parent[size_t(v)])
                    depth++;
            lengths[size_t(s)] = depth;
            deepest = std::max(deepest, depth);
        }
        if (deepest <= limit)
            return lengths;
        for (uint64_t &c : counts)
            if (c > 0)
                c = (c >> 1) | 1;
    }
}

/** Canonical codes for the lengths (RFC 1951 3.2.2), bit-reversed to be sent LSB first. */
std::vector<uint32_t> canonical_codes(const std::vector<int> &lengths) {
    std::array<uint32_t, kMaxCodeBits + 2> per_length{}, next{};
    for (int l : lengths)
        per_length[size_t(l)]++;
    per_length[0] = 0;
    uint32_t code = 0;
    for (int bits = 1; bits <= kMaxCodeBits; bits++) {
        code = (code + per_length[size_t(bits - 1)]) << 1;
        next[size_t(bits)] = code;
    }
    std::vector<uint32_t> codes(lengths.size(), 0);
    for (size_t s = 0; s < lengths.size(); s++) {
        int l = lengths[s];
        if (l == 0)
            continue;
        uint32_t c = next[size_t(l)]++, reversed = 0;
        for (int i = 0; i < l; i++)
            reversed |= ((c >> i) & 1u) << (l - 1 - i);
        codes[s] = reversed;
    }
    return codes;
}

struct LengthSymbol {
    int symbol;     // 0-18
    uint32_t extra; // the repeat count's extra bits
    int extra_bits;
};

/** The code lengths run-length coded with symbols 16 (repeat the previous 3-6 times), 17 (3-10
 *  zeros) and 18 (11-138 zeros), RFC 1951 3.2.7. */
std::vector<LengthSymbol> run_length_code(const std::vector<int> &lengths) {
    std::vector<LengthSymbol> out;
    const size_t n = lengths.size();
    for (size_t i = 0; i < n;) {
        const int v = lengths[i];
        size_t run = 1;
        while (i + run < n && lengths[i + run] == v)
            run++;
        size_t left = run;
        if (v == 0) {
            for (; left >= 11; left -= std::min<size_t>(left, 138))
                out.push_back({18, uint32_t(std::min<size_t>(left, 138) - 11), 7});
            if (left >= 3) {
                out.push_back({17, uint32_t(left - 3), 3});
                left = 0;
            }
        } else {
            out.push_back({v, 0, 0});
            for (left--; left >= 3; left -= std::min<size_t>(left, 6))
                out.push_back({16, uint32_t(std::min<size_t>(left, 6) - 3), 2});
        }
        for (; left > 0; left--)
            out.push_back({v, 0, 0});
        i += run;
    }
    return out;
}

/** One dynamic-Huffman block's codes (RFC 1951 3.2.7) and its size in bits, known before it is
 *  written, so that the output is sized to what is written rather than to a worst case. */
struct BlockCode {
    std::vector<int> lengths;
    std::vector<uint32_t> codes;
    std::vector<LengthSymbol> rle; // the literal/length lengths, then one unused distance code
    std::vector<int> rle_lengths;
    std::vector<uint32_t> rle_codes;
    int sent_length_codes = kLengthCodeSymbols;
    uint64_t bits = 0;
};

BlockCode plan_block(const uint8_t *in, size_t size) {
    BlockCode b;
    std::vector<uint64_t> counts(kLiteralSymbols, 0);
    for (size_t i = 0; i < size; i++)
        counts[in[i]]++;
    counts[kEndOfBlock] = 1;
    b.lengths = code_lengths(counts, kMaxCodeBits);
    b.codes = canonical_codes(b.lengths);
    std::vector<int> sent = b.lengths;
    sent.push_back(0);
    b.rle = run_length_code(sent);
    std::vector<uint64_t> rle_counts(kLengthCodeSymbols, 0);
    for (const LengthSymbol &s : b.rle)
        rle_counts[size_t(s.symbol)]++;
    b.rle_lengths = code_lengths(rle_counts, kMaxLengthCodeBits);
    b.rle_codes = canonical_codes(b.rle_lengths);
    while (b.sent_length_codes > 4 &&
           b.rle_lengths[size_t(kLengthCodeOrder[size_t(b.sent_length_codes - 1)])] == 0)
        b.sent_length_codes--;
    b.bits = 3 + 5 + 5 + 4 + 3 * uint64_t(b.sent_length_codes);
    for (const LengthSymbol &s : b.rle)
        b.bits += uint64_t(b.rle_lengths[size_t(s.symbol)] + s.extra_bits);
    for (int sym = 0; sym < kLiteralSymbols; sym++)
        b.bits += counts[size_t(sym)] * uint64_t(b.lengths[size_t(sym)]);
    return b;
}

void write_block(const uint8_t *in, size_t size, const BlockCode &b, bool final_block,
                 BitWriter &w) {
    w.put(final_block ? 1 : 0, 1);
    w.put(2, 2);                                 // BTYPE 10: dynamic Huffman codes
    w.put(kLiteralSymbols - 257, 5);             // HLIT
    w.put(0, 5);                                 // HDIST: one distance code, unused
    w.put(uint32_t(b.sent_length_codes - 4), 4); // HCLEN
    for (int i = 0; i < b.sent_length_codes; i++)
        w.put(uint32_t(b.rle_lengths[size_t(kLengthCodeOrder[size_t(i)])]), 3);
    for (const LengthSymbol &s : b.rle) {
        w.put(b.rle_codes[size_t(s.symbol)], b.rle_lengths[size_t(s.symbol)]);
        if (s.extra_bits > 0)
            w.put(s.extra, s.extra_bits);
    }
    std::array<uint32_t, 256> code{};
    std::array<int, 256> bits{};
    for (int c = 0; c < 256; c++) {
        code[size_t(c)] = b.codes[size_t(c)];
        bits[size_t(c)] = b.lengths[size_t(c)];
    }
    size_t i = 0;
    for (; i + 3 <= size; i += 3) {
        w.add(code[in[i]], bits[in[i]]);
        w.add(code[in[i + 1]], bits[in[i + 1]]);
        w.add(code[in[i + 2]], bits[in[i + 2]]);
        w.flush();
    }
    for (; i < size; i++)
        w.put(code[in[i]], bits[in[i]]);
    w.put(b.codes[kEndOfBlock], b.lengths[kEndOfBlock]);
}

} // namespace

void deflate_huffman_only(const uint8_t *in, size_t size, bool last, std::vector<uint8_t> &out) {
    std::vector<BlockCode> blocks;
    uint64_t bits = 10; // the empty input's fixed block, or the sync flush's 3 bits and padding
    for (size_t at = 0; at < size; at += kHuffmanBlockBytes) {
        blocks.push_back(plan_block(in + at, std::min(kHuffmanBlockBytes, size - at)));
        bits += blocks.back().bits;
    }
    // The bits, the sync flush's 4 bytes and 8 for the bit writer's whole-word stores.
    const size_t start = out.size(), bound = size_t((bits + 7) / 8) + 4 + 8;
    out.resize(start + bound);
    BitWriter w(out.data() + start);
    if (size == 0 && last) {
        w.put(1, 1); // BFINAL
        w.put(1, 2); // BTYPE 01: fixed codes, whose end-of-block is seven zero bits
        w.put(0, 7);
    }
    for (size_t k = 0; k < blocks.size(); k++) {
        const size_t at = k * kHuffmanBlockBytes, n = std::min(kHuffmanBlockBytes, size - at);
        write_block(in + at, n, blocks[k], last && at + n == size, w);
    }
    if (!last) {
        w.put(0, 3); // an empty stored block: BFINAL 0, BTYPE 00, then LEN 0 and NLEN 0xffff
        w.align();
        for (uint8_t b : {0x00, 0x00, 0xff, 0xff})
            w.byte(b);
    }
    w.align();
    const size_t written = size_t(w.at() - (out.data() + start));
    nhc_assert(written + 8 <= bound,
               "Huffman deflate wrote " << written << " bytes, planned " << bound - 8);
    out.resize(start + written);
}

} // namespace nhc::neff
