#include "neff/Archive.h"

#include "support/Error.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

namespace nhc::neff {

namespace {

struct WriteCtx {
    std::vector<uint8_t> *out;
};

la_ssize_t write_cb(struct archive *, void *user, const void *buf, size_t n) {
    auto *ctx = static_cast<WriteCtx *>(user);
    const auto *b = static_cast<const uint8_t *>(buf);
    ctx->out->insert(ctx->out->end(), b, b + n);
    return la_ssize_t(n);
}

void check_write(struct archive *a, int rc, const char *what) {
    nhc_assert(rc == ARCHIVE_OK, "libarchive " << what << " failed: " << archive_error_string(a));
}

} // namespace

std::vector<uint8_t> write_tar(const ArchiveMembers &members, bool gzip) {
    std::vector<uint8_t> out;
    WriteCtx ctx{&out};
    std::unique_ptr<struct archive, int (*)(struct archive *)> a(archive_write_new(),
                                                                 archive_write_free);
    check_write(a.get(), archive_write_set_format_ustar(a.get()), "set_format_ustar");
    if (gzip) {
        check_write(a.get(), archive_write_add_filter_gzip(a.get()), "add_filter_gzip");
        // No timestamp in the gzip header: identical inputs give identical NEFFs.
        check_write(a.get(), archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr),
                    "gzip !timestamp");
    }
    // No padding of the last block: the payload is exactly the tar (or gzip) bytes.
    check_write(a.get(), archive_write_set_bytes_in_last_block(a.get(), 1), "bytes_in_last_block");
    check_write(a.get(), archive_write_open(a.get(), &ctx, nullptr, write_cb, nullptr), "open");
    for (const auto &[name, bytes] : members) {
        std::unique_ptr<struct archive_entry, void (*)(struct archive_entry *)> e(
            archive_entry_new(), archive_entry_free);
        archive_entry_set_pathname(e.get(), name.c_str());
        archive_entry_set_size(e.get(), la_int64_t(bytes.size()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), 0644);
        archive_entry_set_mtime(e.get(), 0, 0);
        archive_entry_set_uid(e.get(), 0);
        archive_entry_set_gid(e.get(), 0);
        check_write(a.get(), archive_write_header(a.get(), e.get()), "write_header");
        if (!bytes.empty()) {
            la_ssize_t n = archive_write_data(a.get(), bytes.data(), bytes.size());
            nhc_assert(n == la_ssize_t(bytes.size()), "libarchive short write of " << name);
        }
    }
    check_write(a.get(), archive_write_close(a.get()), "close");
    return out;
}

ArchiveMembers read_tar(const uint8_t *data, size_t size) {
    std::unique_ptr<struct archive, int (*)(struct archive *)> a(archive_read_new(),
                                                                 archive_read_free);
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_none(a.get());
    archive_read_support_format_tar(a.get());
    if (archive_read_open_memory(a.get(), data, size) != ARCHIVE_OK) {
        user_error("NHC_ENEFF005",
                   "NEFF payload is not a tar archive: ", archive_error_string(a.get()));
    }
    ArchiveMembers members;
    struct archive_entry *e = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
        std::string name = archive_entry_pathname(e);
        std::vector<uint8_t> bytes;
        uint8_t buf[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) {
            bytes.insert(bytes.end(), buf, buf + n);
        }
        if (n < 0) {
            user_error("NHC_ENEFF005", "NEFF payload member '", name,
                       "' is corrupt: ", archive_error_string(a.get()));
        }
        members[name] = std::move(bytes);
    }
    if (rc != ARCHIVE_EOF) {
        user_error("NHC_ENEFF005", "NEFF payload is corrupt: ", archive_error_string(a.get()));
    }
    return members;
}

} // namespace nhc::neff
