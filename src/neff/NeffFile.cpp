#include "neff/NeffFile.h"

#include "neff/Archive.h"
#include "neff/DefJson.h"
#include "neff/Encoding.h"
#include "neff/Sha256.h"
#include "support/Error.h"
#include "support/Files.h"
#include "target/Target.h"

#include <cstring>
#include <fstream>
#include <functional>

#ifndef NHC_VERSION
#define NHC_VERSION "0.0.0"
#endif

namespace nhc::neff {

namespace {

// Field offsets of the header (neuron-compiler.md §4.1 table).
constexpr size_t kOffPkgVersion = 0, kOffHeaderSize = 8, kOffDataSize = 16, kOffMajor = 24,
                 kOffMinor = 32, kOffBuild = 40, kOffNumTpb = 168, kOffHash = 172, kOffUuid = 204,
                 kOffName = 220, kOffRequestedTpb = 476, kOffTpbPerNode = 480,
                 kOffFeatureBits = 544, kOffLncSize = 552;
constexpr size_t kBuildLen = 128, kNameLen = 256;

template <typename T>
void put(uint8_t *b, size_t off, T v) {
    std::memcpy(b + off, &v, sizeof v); // little-endian host, as KLR reads it
}
template <typename T>
T get(const uint8_t *b, size_t off) {
    T v;
    std::memcpy(&v, b + off, sizeof v);
    return v;
}

void put_str(uint8_t *b, size_t off, size_t len, const std::string &s) {
    std::memcpy(b + off, s.data(), std::min(len - 1, s.size())); // NUL-terminated
}
std::string get_str(const uint8_t *b, size_t off, size_t len) {
    const char *c = reinterpret_cast<const char *>(b + off);
    return std::string(c, strnlen(c, len));
}

void load_streams(const ArchiveMembers &m, const std::vector<std::string> &files, Program &p) {
    for (int e = 0; e < kNumEngines; e++) {
        auto it = m.find(files[e]);
        if (files[e].empty() || it == m.end()) {
            user_error("NHC_ENEFF005", "NEFF has no instruction stream for engine ",
                       target::engine_name(Engine(e)), " ('", files[e], "')");
        }
        p.streams[e] = decode_stream(it->second, Engine(e), files[e]);
    }
}

void load_weights(ArchiveRead &r, Program &p, const ReadOptions &opt) {
    p.weights_loaded = opt.weights;
    for (size_t i = 0; i < p.vars.size(); i++) {
        Variable &v = p.vars[i];
        if (v.kind != VarKind::Weight) {
            continue;
        }
        std::string file = weight_member(int(i));
        auto kept = r.members.find(file);
        auto skipped = r.skipped_sizes.find(file);
        int64_t size = kept != r.members.end()            ? int64_t(kept->second.size())
                       : skipped != r.skipped_sizes.end() ? skipped->second
                                                          : -1;
        if (size < 0) {
            user_error("NHC_ENEFF011", "weight '", v.name, "' has no file ", file);
        }
        if (size != v.size_bytes()) {
            user_error("NHC_ENEFF011", "weight '", v.name, "' file has ", size, " bytes, expected ",
                       v.size_bytes());
        }
        if (kept != r.members.end()) {
            v.set_bytes(std::move(kept->second));
        }
    }
}

NeffHeader check_header(const uint8_t *bytes, uint64_t payload_size) {
    NeffHeader h = decode_header(bytes);
    if (h.header_size != kHeaderSize || h.pkg_version != kPkgVersion) {
        user_error("NHC_ENEFF001", "not a NEFF: header_size ", h.header_size, " (expected ",
                   kHeaderSize, "), pkg_version ", h.pkg_version, " (expected ", kPkgVersion, ")");
    }
    if (h.neff_version_major != kNeffVersionMajor || h.neff_version_minor > kNeffVersionMinor) {
        user_error("NHC_ENEFF002", "NEFF version mismatch supported: ", kNeffVersionMajor, ".",
                   kNeffVersionMinor, " received: ", h.neff_version_major, ".",
                   h.neff_version_minor);
    }
    if (h.data_size != payload_size) {
        user_error("NHC_ENEFF004", "NEFF is ",
                   h.data_size > payload_size ? "truncated" : "too long", ": header data_size is ",
                   h.data_size, " bytes, file holds ", payload_size);
    }
    return h;
}

void check_hash(const NeffHeader &h, const std::array<uint8_t, 32> &digest) {
    if (digest != h.hash) {
        user_error("NHC_ENEFF003", "NEFF hash mismatch: header sha256 ", hex(h.hash.data(), 32),
                   ", payload sha256 ", hex(digest.data(), 32));
    }
}

/** The most a payload may unpack to: a NEFF that no NeuronCore's HBM holds cannot run on any,
 *  and a header that says otherwise is not trusted for an allocation (issue 19). */
uint64_t max_payload_unpacked() {
    int64_t most = 0;
    for (const auto &t : target::all_targets())
        most = std::max(most, t.hbm_bytes_per_core);
    return uint64_t(most);
}

/** The program of an unpacked payload. */
void read_members(ArchiveRead &r, const ReadOptions &opt, NeffContents &c) {
    ArchiveMembers &m = r.members;
    if (m.count(kPartitionMember) && m.count("info.json")) { // host fallback: segments
        c.info_json.assign(m["info.json"].begin(), m["info.json"].end());
        parse_info_json(c.info_json, c.program);
        c.partition_json.assign(m[kPartitionMember].begin(), m[kPartitionMember].end());
        for (auto &[name, bytes] : m)
            if (name != "info.json" && name != kPartitionMember)
                c.segment_files[name] = std::move(bytes);
        return;
    }
    for (const char *need : {"info.json", "sg00/def.json"}) {
        if (!m.count(need)) {
            user_error("NHC_ENEFF005", "NEFF archive has no ", need);
        }
    }
    c.info_json.assign(m["info.json"].begin(), m["info.json"].end());
    parse_info_json(c.info_json, c.program);
    const auto &def = m["sg00/def.json"];
    auto files = parse_def_json(std::string(def.begin(), def.end()), c.program);
    load_streams(m, files, c.program);
    load_weights(r, c.program, opt);
    validate_program(c.program);
}

} // namespace

std::string hex(const uint8_t *b, size_t n) {
    static const char *d = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) {
        s += d[b[i] >> 4];
        s += d[b[i] & 15];
    }
    return s;
}

std::array<uint8_t, kHeaderSize> encode_header(const NeffHeader &h) {
    std::array<uint8_t, kHeaderSize> b{};
    put<uint64_t>(b.data(), kOffPkgVersion, h.pkg_version);
    put<uint64_t>(b.data(), kOffHeaderSize, h.header_size);
    put<uint64_t>(b.data(), kOffDataSize, h.data_size);
    put<uint64_t>(b.data(), kOffMajor, h.neff_version_major);
    put<uint64_t>(b.data(), kOffMinor, h.neff_version_minor);
    put_str(b.data(), kOffBuild, kBuildLen, h.build_version);
    put<uint32_t>(b.data(), kOffNumTpb, h.num_tpb);
    std::memcpy(b.data() + kOffHash, h.hash.data(), 32);
    std::memcpy(b.data() + kOffUuid, h.uuid.data(), 16);
    put_str(b.data(), kOffName, kNameLen, h.name);
    put<uint32_t>(b.data(), kOffRequestedTpb, h.requested_tpb_count);
    std::memcpy(b.data() + kOffTpbPerNode, h.tpb_per_node.data(), 64);
    put<uint64_t>(b.data(), kOffFeatureBits, h.feature_bits);
    put<uint32_t>(b.data(), kOffLncSize, h.lnc_size);
    return b;
}

NeffHeader decode_header(const uint8_t *b) {
    NeffHeader h;
    h.pkg_version = get<uint64_t>(b, kOffPkgVersion);
    h.header_size = get<uint64_t>(b, kOffHeaderSize);
    h.data_size = get<uint64_t>(b, kOffDataSize);
    h.neff_version_major = get<uint64_t>(b, kOffMajor);
    h.neff_version_minor = get<uint64_t>(b, kOffMinor);
    h.build_version = get_str(b, kOffBuild, kBuildLen);
    h.num_tpb = get<uint32_t>(b, kOffNumTpb);
    std::memcpy(h.hash.data(), b + kOffHash, 32);
    std::memcpy(h.uuid.data(), b + kOffUuid, 16);
    h.name = get_str(b, kOffName, kNameLen);
    h.requested_tpb_count = get<uint32_t>(b, kOffRequestedTpb);
    std::memcpy(h.tpb_per_node.data(), b + kOffTpbPerNode, 64);
    h.feature_bits = get<uint64_t>(b, kOffFeatureBits);
    h.lnc_size = get<uint32_t>(b, kOffLncSize);
    return h;
}

namespace {

/** Writes the archive of `view` to `sink` and returns the header that describes it. */
NeffHeader write_archive_payload(const ArchiveView &view, const std::string &name,
                                 const WriteOptions &opt, const ArchiveSink &sink) {
    Sha256 hasher;
    NeffHeader h;
    h.data_size = 0;
    write_tar(
        view, opt.compress,
        [&](const uint8_t *b, size_t n) {
            hasher.update(b, n);
            h.data_size += n;
            sink(b, n);
        },
        opt.progress, opt.jobs);
    h.build_version = std::string("neuron-halide-cc ") + NHC_VERSION;
    h.hash = hasher.final();
    // uuid from the content hash (RFC 9562 version 8 = custom), never random.
    std::memcpy(h.uuid.data(), h.hash.data(), 16);
    h.uuid[6] = uint8_t((h.uuid[6] & 0x0f) | 0x80);
    h.uuid[8] = uint8_t((h.uuid[8] & 0x3f) | 0x80);
    h.name = name;
    h.tpb_per_node[0] = 1;
    return h;
}

/** Writes the payload of `p` to `sink` and returns the header that describes it. */
NeffHeader write_payload(const Program &p, const WriteOptions &opt, const ArchiveSink &sink) {
    ArchiveMembers m; // the small members; the weights are written from the program's bytes
    std::string info = make_info_json(p), def = make_def_json(p);
    m["info.json"].assign(info.begin(), info.end());
    m["sg00/def.json"].assign(def.begin(), def.end());
    for (int e = 0; e < kNumEngines; e++) {
        m[stream_member(Engine(e))] = encode_stream(Engine(e), p.streams[e]);
    }
    ArchiveView view;
    for (const auto &[name, bytes] : m)
        view[name] = {bytes.data(), bytes.size(), nullptr};
    for (size_t i = 0; i < p.vars.size(); i++) {
        const Variable &v = p.vars[i];
        if (v.kind == VarKind::Weight) {
            size_t held = v.has_bytes() ? v.data_size : 0;
            nhc_assert(int64_t(held) == v.size_bytes(), "weight '" << v.name << "' has " << held
                                                                   << " bytes, expected "
                                                                   << v.size_bytes());
            if (v.make_bytes)
                view[weight_member(int(i))] = {nullptr, held, v.make_bytes};
            else
                view[weight_member(int(i))] = {v.data.get(), held, nullptr};
        }
    }
    return write_archive_payload(view, p.name, opt, sink);
}

} // namespace

std::vector<uint8_t> write_neff(const Program &p, const WriteOptions &opt) {
    std::vector<uint8_t> out(kHeaderSize); // the payload follows the header, not copied after
    NeffHeader h =
        write_payload(p, opt, [&](const uint8_t *b, size_t n) { out.insert(out.end(), b, b + n); });
    auto hb = encode_header(h);
    std::memcpy(out.data(), hb.data(), kHeaderSize);
    return out;
}

namespace {

/** Writes a NEFF file whose payload `write` makes (given the sink), header last. */
void write_file_with_header(const std::string &path,
                            const std::function<NeffHeader(const ArchiveSink &)> &write) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    std::array<uint8_t, kHeaderSize> hb{}; // rewritten once the payload's size and hash are known
    f.write(reinterpret_cast<const char *>(hb.data()), kHeaderSize);
    NeffHeader h = write([&](const uint8_t *b, size_t n) {
        f.write(reinterpret_cast<const char *>(b), std::streamsize(n));
    });
    hb = encode_header(h);
    f.seekp(0);
    f.write(reinterpret_cast<const char *>(hb.data()), kHeaderSize);
    f.close();
    if (!f) {
        user_error("NHC_ENEFF010", "cannot write '", path, "'");
    }
}

} // namespace

void write_neff_file(const std::string &path, const Program &p, const WriteOptions &opt) {
    write_file_with_header(path,
                           [&](const ArchiveSink &sink) { return write_payload(p, opt, sink); });
}

void write_partitioned_neff_file(const std::string &path, const std::string &name,
                                 const ArchiveMembers &members, const WriteOptions &opt) {
    nhc_assert(members.count("info.json") && members.count(kPartitionMember),
               "a partitioned NEFF needs info.json and " << kPartitionMember);
    ArchiveView view;
    for (const auto &[member, bytes] : members)
        view[member] = {bytes.data(), bytes.size(), nullptr};
    write_file_with_header(path, [&](const ArchiveSink &sink) {
        return write_archive_payload(view, name, opt, sink);
    });
}

NeffContents read_neff(const std::vector<uint8_t> &bytes, const ReadOptions &opt) {
    if (bytes.size() < kHeaderSize) {
        user_error("NHC_ENEFF004", "NEFF is truncated: ", bytes.size(), " bytes, shorter than the ",
                   kHeaderSize, "-byte header");
    }
    NeffContents c;
    uint64_t payload_size = bytes.size() - kHeaderSize;
    c.header = check_header(bytes.data(), payload_size);
    const uint8_t *payload = bytes.data() + kHeaderSize;
    check_hash(c.header, sha256(payload, payload_size));
    c.compressed = payload_size >= 2 && payload[0] == 0x1f && payload[1] == 0x8b;
    size_t at = 0;
    ArchiveSource source = [&](uint8_t *buf, size_t capacity) {
        size_t n = std::min(capacity, size_t(payload_size) - at);
        std::memcpy(buf, payload + at, n);
        at += n;
        return n;
    };
    ArchiveRead r = read_tar_stream(
        source, [&](const std::string &name) { return !opt.weights && is_weight_member(name); },
        {payload_size, max_payload_unpacked()});
    read_members(r, opt, c);
    return c;
}

namespace {

/** Opens a NEFF file and reads its header, checked (check_header); `f` is left after it. */
NeffHeader open_neff_file(const std::string &path, std::ifstream &f, uint64_t *file_size) {
    f.open(path, std::ios::binary | std::ios::ate);
    if (!f) {
        user_error("NHC_ENEFF010", "cannot open '", path, "' for reading");
    }
    *file_size = uint64_t(f.tellg());
    f.seekg(0);
    if (*file_size < kHeaderSize) {
        user_error("NHC_ENEFF004", "NEFF is truncated: ", *file_size, " bytes, shorter than the ",
                   kHeaderSize, "-byte header");
    }
    std::array<uint8_t, kHeaderSize> head{};
    f.read(reinterpret_cast<char *>(head.data()), kHeaderSize);
    return check_header(head.data(), *file_size - kHeaderSize);
}

} // namespace

NeffHeader check_neff_file_hash(const std::string &path) {
    std::ifstream f;
    uint64_t file_size = 0;
    NeffHeader h = open_neff_file(path, f, &file_size);
    Sha256 hasher;
    std::vector<uint8_t> buf(size_t(1) << 20);
    while (f.read(reinterpret_cast<char *>(buf.data()), std::streamsize(buf.size())) ||
           f.gcount() > 0) {
        hasher.update(buf.data(), size_t(f.gcount()));
    }
    check_hash(h, hasher.final());
    return h;
}

NeffContents read_neff_file(const std::string &path, const ReadOptions &opt) {
    std::ifstream f;
    uint64_t file_size = 0;
    NeffContents c;
    c.header = open_neff_file(path, f, &file_size);
    Sha256 hasher;
    bool first = true;
    ArchiveSource source = [&](uint8_t *buf, size_t capacity) {
        f.read(reinterpret_cast<char *>(buf), std::streamsize(capacity));
        size_t n = size_t(f.gcount());
        hasher.update(buf, n);
        if (first && n >= 2) {
            c.compressed = buf[0] == 0x1f && buf[1] == 0x8b;
        }
        first = false;
        return n;
    };
    // The hash covers the whole payload: what unpacking left unread is hashed after it.
    auto digest = [&] {
        std::vector<uint8_t> rest(size_t(1) << 20);
        while (source(rest.data(), rest.size()) > 0) {
        }
        return hasher.final();
    };
    ArchiveRead r;
    try {
        r = read_tar_stream(
            source, [&](const std::string &name) { return !opt.weights && is_weight_member(name); },
            {file_size - kHeaderSize, max_payload_unpacked()});
    } catch (const UserError &) {
        check_hash(c.header, digest()); // a corrupt payload is reported as such first
        throw;
    }
    check_hash(c.header, digest());
    read_members(r, opt, c);
    return c;
}

std::vector<uint8_t> read_file_bytes(const std::string &path) {
    std::vector<uint8_t> bytes;
    if (!read_whole_file(path, &bytes)) {
        user_error("NHC_ENEFF010", "cannot open '", path, "' for reading");
    }
    return bytes;
}

void write_file_bytes(const std::string &path, const std::vector<uint8_t> &bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!f) {
        user_error("NHC_ENEFF010", "cannot write '", path, "'");
    }
}

} // namespace nhc::neff
