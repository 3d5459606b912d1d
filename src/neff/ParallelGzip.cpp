#include "neff/ParallelGzip.h"

#include "support/Error.h"

#include <llvm/Support/ThreadPool.h>
#include <zlib.h>

#include <algorithm>

namespace nhc::neff {

namespace {

/** Raw deflate of one block with a fresh state: a sync flush at its end (an empty stored block
 *  that ends on a byte boundary), or, for the last block, the final block bit. */
std::vector<uint8_t> deflate_block(const std::vector<uint8_t> &in, bool last) {
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

/** Whether deflate pays for a block: its first kProbeBytes, deflated, must shrink by at least
 *  kMinSaving. Trained weights shrink by some 7% at 28 MB/s a core (measured on BERT-base's
 *  fp32 weights, level 1), which makes writing the NEFF the longest step of a compile for 7% of
 *  disk; instruction streams and zero-filled tensors shrink by far more, and stay deflated. The
 *  probe reads only the block, so the choice is the same for any job count. */
bool worth_deflating(const std::vector<uint8_t> &in) {
    constexpr size_t kProbeBytes = 64 << 10;
    constexpr double kMinSaving = 0.10;
    std::vector<uint8_t> probe(in.begin(), in.begin() + long(std::min(in.size(), kProbeBytes)));
    if (probe.empty())
        return true;
    std::vector<uint8_t> deflated = deflate_block(probe, /*last=*/true);
    return double(deflated.size()) <= (1.0 - kMinSaving) * double(probe.size());
}

void put_le32(std::vector<uint8_t> &out, uint32_t v) {
    for (int i = 0; i < 4; i++)
        out.push_back(uint8_t(v >> (8 * i)));
}

} // namespace

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
        b.deflated =
            worth_deflating(*input) ? deflate_block(*input, last) : store_block(*input, last);
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
