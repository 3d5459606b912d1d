#include "neff/ParallelGzip.h"

#include "neff/HuffmanDeflate.h"

#include "support/Error.h"

#include <llvm/Support/ThreadPool.h>
#include <zlib.h>

#include <algorithm>

namespace nhc::neff {

namespace {

/** Raw deflate of one block with a fresh state: a sync flush at its end (an empty stored block
 *  that ends on a byte boundary), or, for the last block, the final block bit. */
std::vector<uint8_t> deflate_block(const std::vector<uint8_t> &in, bool last, BlockCoding coding) {
    if (coding == BlockCoding::HuffmanOnly) {
        std::vector<uint8_t> out;
        deflate_huffman_only(in.data(), in.size(), last, out);
        return out;
    }
    z_stream s{};
    int rc = deflateInit2(&s, /*level=*/1, Z_DEFLATED, /*windowBits=*/-15, /*memLevel=*/8,
                          Z_DEFAULT_STRATEGY);
    nhc_assert(rc == Z_OK, "deflateInit2 failed: " << rc);
    std::vector<uint8_t> out(deflateBound(&s, uLong(in.size())) + 16);
    s.next_in = const_cast<Bytef *>(in.data());
    s.avail_in = uInt(in.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    rc = deflate(&s, last ? Z_FINISH : Z_SYNC_FLUSH);
    nhc_assert(rc == (last ? Z_STREAM_END : Z_OK) && s.avail_in == 0,
               "deflate of a " << in.size() << "-byte block failed: " << rc);
    out.resize(out.size() - s.avail_out);
    deflateEnd(&s);
    return out;
}

/** Deflate's stored blocks (RFC 1951 3.2.4) of at most 65,535 bytes each: the bytes as they
 *  are, at the speed of a copy. Each block starts on a byte, as the blocks before it end on one. */
std::vector<uint8_t> store_block(const std::vector<uint8_t> &in, bool last) {
    constexpr size_t kMaxStored = 65535;
    std::vector<uint8_t> out;
    out.reserve(in.size() + 5 * (in.size() / kMaxStored + 1));
    size_t at = 0;
    do {
        size_t len = std::min(kMaxStored, in.size() - at);
        bool final_block = last && at + len == in.size();
        const uint8_t header[5] = {uint8_t(final_block ? 1 : 0), uint8_t(len), uint8_t(len >> 8),
                                   uint8_t(~len), uint8_t(~len >> 8)};
        out.insert(out.end(), header, header + 5);
        out.insert(out.end(), in.begin() + long(at), in.begin() + long(at + len));
        at += len;
    } while (at < in.size());
    return out;
}

void put_le32(std::vector<uint8_t> &out, uint32_t v) {
    for (int i = 0; i < 4; i++)
        out.push_back(uint8_t(v >> (8 * i)));
}

} // namespace

/** Matches are kept where they shrink the probe by kMatchGain more than Huffman codes alone:
 *  instruction streams (to 10% with matches, 43% without). Trained 16-bit weights (few distinct
 *  exponent bytes, strings that rarely repeat) take Huffman codes alone: on BERT-base's bf16
 *  NEFF they shrink to 77% either way, three times as fast without matching in zlib (139 against
 *  48 MB/s a core, level 1), and neff/HuffmanDeflate writes the same coding five to six times as
 *  fast as zlib's (bench/README.md, "Compile time, 24 layers against 12"). A block that shrinks
 *  by less than kMinSaving either way is stored:
 *  fp32 weights shrink by some 7% (28 MB/s a core with matches), not worth the time. The probe
 *  reads only the block, so the choice is the same for any job count. */
BlockCoding block_coding(const std::vector<uint8_t> &in) {
    constexpr size_t kProbeBytes = 64 << 10;
    constexpr double kMinSaving = 0.10, kMatchGain = 0.05;
    std::vector<uint8_t> probe(in.begin(), in.begin() + long(std::min(in.size(), kProbeBytes)));
    if (probe.empty())
        return BlockCoding::Matches;
    const double n = double(probe.size());
    const double matches = double(deflate_block(probe, /*last=*/true, BlockCoding::Matches).size());
    const double huffman =
        double(deflate_block(probe, /*last=*/true, BlockCoding::HuffmanOnly).size());
    const bool matches_pay = matches <= (1.0 - kMinSaving) * n;
    if (huffman <= (1.0 - kMinSaving) * n && !(matches_pay && matches <= huffman - kMatchGain * n))
        return BlockCoding::HuffmanOnly;
    return matches_pay ? BlockCoding::Matches : BlockCoding::Stored;
}

ParallelGzip::ParallelGzip(Sink sink, int jobs) : sink_(std::move(sink)), jobs_(jobs) {
    nhc_assert(jobs_ >= 1, "ParallelGzip needs at least one job");
    if (jobs_ > 1)
        pool_ = std::make_unique<llvm::ThreadPool>(llvm::hardware_concurrency(unsigned(jobs_)));
    crc_ = uint32_t(crc32(0, nullptr, 0));
    // RFC 1952: magic, deflate, no flags, mtime 0, no extra flags, OS unknown (255).
    const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
    sink_(header, sizeof header);
    pending_.reserve(kBlockBytes);
}

ParallelGzip::~ParallelGzip() {
    if (pool_)
        pool_->wait(); // an exception unwinding past an unfinished stream: no thread left behind
}

void ParallelGzip::write(const uint8_t *data, size_t size) {
    nhc_assert(!finished_, "write after finish");
    while (size > 0) {
        size_t take = std::min(size, kBlockBytes - pending_.size());
        pending_.insert(pending_.end(), data, data + take);
        data += take;
        size -= take;
        if (pending_.size() == kBlockBytes)
            submit(/*last=*/false);
    }
}

void ParallelGzip::finish() {
    nhc_assert(!finished_, "finish twice");
    submit(/*last=*/true);
    while (!in_flight_.empty())
        emit_oldest();
    std::vector<uint8_t> trailer;
    put_le32(trailer, crc_);
    put_le32(trailer, uint32_t(total_)); // ISIZE: the input size modulo 2^32
    sink_(trailer.data(), trailer.size());
    finished_ = true;
}

void ParallelGzip::submit(bool last) {
    auto input = std::make_shared<std::vector<uint8_t>>(std::move(pending_));
    pending_ = std::vector<uint8_t>();
    pending_.reserve(kBlockBytes);
    auto work = [input, last]() {
        Block b;
        BlockCoding coding = block_coding(*input);
        b.deflated = coding == BlockCoding::Stored ? store_block(*input, last)
                                                   : deflate_block(*input, last, coding);
        b.crc = uint32_t(crc32(0, input->data(), uInt(input->size())));
        b.size = input->size();
        return b;
    };
    if (!pool_) {
        std::promise<Block> done;
        done.set_value(work());
        in_flight_.push_back(done.get_future().share());
    } else {
        in_flight_.push_back(pool_->async(work));
    }
    // At most two blocks per job in memory: the oldest is written before more are read.
    while (in_flight_.size() > size_t(2 * jobs_))
        emit_oldest();
}

void ParallelGzip::emit_oldest() {
    const Block &b = in_flight_.front().get();
    sink_(b.deflated.data(), b.deflated.size());
    crc_ = uint32_t(crc32_combine(crc_, b.crc, z_off_t(b.size)));
    total_ += b.size;
    in_flight_.pop_front();
}

} // namespace nhc::neff
