#include "neff/Archive.h"

#include "neff/ParallelGzip.h"
#include "support/Error.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>

namespace nhc::neff {

namespace {

la_ssize_t write_cb(struct archive *, void *user, const void *buf, size_t n) {
    (*static_cast<const ArchiveSink *>(user))(static_cast<const uint8_t *>(buf), n);
    return la_ssize_t(n);
}

void check_write(struct archive *a, int rc, const char *what) {
    nhc_assert(rc == ARCHIVE_OK, "libarchive " << what << " failed: " << archive_error_string(a));
}

} // namespace

std::vector<uint8_t> write_tar(const ArchiveMembers &members, bool gzip) {
    ArchiveView view;
    for (const auto &[name, bytes] : members)
        view[name] = {bytes.data(), bytes.size(), nullptr};
    std::vector<uint8_t> out;
    write_tar(view, gzip, [&](const uint8_t *b, size_t n) { out.insert(out.end(), b, b + n); });
    return out;
}

void write_tar(const ArchiveView &members, bool gzip, const ArchiveSink &sink,
               const ArchiveProgress &progress, int jobs) {
    uint64_t total = 0, done = 0;
    for (const auto &[name, member] : members)
        total += member.size;
    // gzip is ours, not libarchive's filter: compressed by `jobs` threads, the same bytes for any
    // count (ParallelGzip.h). BERT-base's 440 MB of weights took 13.6 s through libarchive's
    // filter at level 1, most of its compile.
    std::unique_ptr<ParallelGzip> gz;
    ArchiveSink tar_sink = sink;
    if (gzip) {
        gz = std::make_unique<ParallelGzip>(sink, jobs);
        tar_sink = [&gz](const uint8_t *b, size_t n) { gz->write(b, n); };
    }
    std::unique_ptr<struct archive, int (*)(struct archive *)> a(archive_write_new(),
                                                                 archive_write_free);
    check_write(a.get(), archive_write_set_format_ustar(a.get()), "set_format_ustar");
    // No padding of the last block: the payload is exactly the tar (or gzip) bytes.
    check_write(a.get(), archive_write_set_bytes_in_last_block(a.get(), 1), "bytes_in_last_block");
    check_write(a.get(), archive_write_open(a.get(), &tar_sink, nullptr, write_cb, nullptr),
                "open");
    std::vector<uint8_t> made; // a piece of a member made as it is written, reused
    for (const auto &[name, member] : members) {
        std::unique_ptr<struct archive_entry, void (*)(struct archive_entry *)> e(
            archive_entry_new(), archive_entry_free);
        archive_entry_set_pathname(e.get(), name.c_str());
        archive_entry_set_size(e.get(), la_int64_t(member.size));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), 0644);
        archive_entry_set_mtime(e.get(), 0, 0);
        archive_entry_set_uid(e.get(), 0);
        archive_entry_set_gid(e.get(), 0);
        check_write(a.get(), archive_write_header(a.get(), e.get()), "write_header");
        // In chunks, so that progress moves within a large weight (GPT-2's 154 MB embedding);
        // a made member's chunk is made on this thread while the gzip jobs code the ones before
        // (made on the jobs too, in parts, the writer took longer: 24 BERT layers 1.33 -> 1.49 s,
        // medians of four; bench/README.md).
        constexpr size_t kChunk = size_t(16) << 20;
        for (size_t at = 0; at < member.size; at += kChunk) {
            size_t size = std::min(kChunk, member.size - at);
            const uint8_t *piece = member.data + at;
            if (member.make) {
                made.resize(size);
                member.make(at, size, made.data());
                piece = made.data();
            }
            la_ssize_t n = archive_write_data(a.get(), piece, size);
            nhc_assert(n == la_ssize_t(size), "libarchive short write of " << name);
            done += size;
            if (progress)
                progress(done, total);
        }
    }
    check_write(a.get(), archive_write_close(a.get()), "close");
    if (gz)
        gz->finish();
}

namespace {

struct ReadCtx {
    const ArchiveSource *source;
    std::vector<uint8_t> buf;
};

la_ssize_t read_cb(struct archive *, void *user, const void **out) {
    auto *ctx = static_cast<ReadCtx *>(user);
    *out = ctx->buf.data();
    return la_ssize_t((*ctx->source)(ctx->buf.data(), ctx->buf.size()));
}

// Deflate expands a byte to at most 1032 (zlib's technical details, zlib.net/zlib_tech.html,
// "Maximum Compression Factor": 258 bytes per 2-bit code at best); gzip's framing only lowers it.
constexpr uint64_t kDeflateMaxExpansion = 1032;

/** The most bytes the archive in `a` can unpack to: its packed size, times deflate's largest
 *  expansion if it is gzip, and never more than the caller accepts. Called after the first
 *  header, when libarchive has recognised the filter. */
uint64_t unpacked_bound(struct archive *a, const ArchiveLimits &limits) {
    bool gzip = false;
    for (int i = 0; i < archive_filter_count(a); i++)
        gzip = gzip || archive_filter_code(a, i) == ARCHIVE_FILTER_GZIP;
    uint64_t bound = limits.packed_bytes;
    if (gzip)
        bound =
            bound > UINT64_MAX / kDeflateMaxExpansion ? UINT64_MAX : bound * kDeflateMaxExpansion;
    return std::min(bound, limits.max_unpacked);
}

/** Adds `bytes` of member `name` to `total`, refusing a size the payload cannot hold or the
 *  caller does not accept: before any allocation for it. */
void count_unpacked(const std::string &name, int64_t bytes, uint64_t bound, uint64_t &total) {
    if (bytes < 0 || uint64_t(bytes) > bound - total) {
        user_error("NHC_ENEFF014", "NEFF payload member '", name, "' declares ", bytes,
                   " bytes, which with the ", total,
                   " bytes of the members before it is more than the payload can unpack to or "
                   "a NeuronCore's HBM holds (at most ",
                   bound, " bytes)");
    }
    total += uint64_t(bytes);
}

/** Reads every member of the opened archive `a`. */
ArchiveRead read_members(struct archive *a, const std::function<bool(const std::string &)> &skip,
                         const ArchiveLimits &limits) {
    ArchiveRead r;
    struct archive_entry *e = nullptr;
    uint64_t total = 0;
    int rc;
    while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        std::string name = archive_entry_pathname(e);
        uint64_t bound = unpacked_bound(a, limits);
        if (archive_entry_size_is_set(e))
            count_unpacked(name, archive_entry_size(e), bound, total);
        if (skip && skip(name)) {
            r.skipped_sizes[name] = archive_entry_size(e);
            if (archive_read_data_skip(a) != ARCHIVE_OK)
                user_error("NHC_ENEFF005", "NEFF payload member '", name,
                           "' is corrupt: ", archive_error_string(a));
            continue;
        }
        std::vector<uint8_t> bytes;
        bool sized = archive_entry_size_is_set(e);
        if (sized)
            bytes.reserve(size_t(archive_entry_size(e)));
        uint8_t buf[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a, buf, sizeof buf)) > 0) {
            if (!sized) // a member without a declared size is counted as it unpacks
                count_unpacked(name, n, bound, total);
            bytes.insert(bytes.end(), buf, buf + n);
        }
        if (n < 0) {
            user_error("NHC_ENEFF005", "NEFF payload member '", name,
                       "' is corrupt: ", archive_error_string(a));
        }
        r.members[name] = std::move(bytes);
    }
    if (rc != ARCHIVE_EOF) {
        user_error("NHC_ENEFF005", "NEFF payload is corrupt: ", archive_error_string(a));
    }
    return r;
}

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive *)>;

ArchivePtr new_reader() {
    ArchivePtr a(archive_read_new(), archive_read_free);
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_none(a.get());
    archive_read_support_format_tar(a.get());
    return a;
}

} // namespace

ArchiveMembers read_tar(const uint8_t *data, size_t size) {
    ArchivePtr a = new_reader();
    if (archive_read_open_memory(a.get(), data, size) != ARCHIVE_OK) {
        user_error("NHC_ENEFF005",
                   "NEFF payload is not a tar archive: ", archive_error_string(a.get()));
    }
    return read_members(a.get(), nullptr, {size}).members;
}

ArchiveRead read_tar_stream(const ArchiveSource &source,
                            const std::function<bool(const std::string &)> &skip,
                            const ArchiveLimits &limits) {
    ArchivePtr a = new_reader();
    ReadCtx ctx{&source, std::vector<uint8_t>(size_t(1) << 20)};
    if (archive_read_open(a.get(), &ctx, nullptr, read_cb, nullptr) != ARCHIVE_OK) {
        user_error("NHC_ENEFF005",
                   "NEFF payload is not a tar archive: ", archive_error_string(a.get()));
    }
    return read_members(a.get(), skip, limits);
}

} // namespace nhc::neff
