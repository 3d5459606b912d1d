#ifndef NHC_NEFF_NEFFFILE_H
#define NHC_NEFF_NEFFFILE_H

/** \file
 * The NEFF container (neuron-compiler.md §4.1-4.2): a 1024-byte header with the public field
 * layout, followed by a tar archive (gzip unless fast loading is asked for) holding
 *   info.json            tool, versions, target, options
 *   sg00/def.json        variables (inputs, outputs, weights, scratch) and engine stream files
 *   sg00/<engine>.bin    one instruction stream per engine (Encoding.h)
 *   sg00/weights/N.bin   raw bytes of weight variable N
 * A partitioned NEFF (host fallback, driver/HostPartition.h) holds instead info.json,
 *   partition.json       the segments in order: kind, file, inputs and outputs by name
 *   sgNN.neff            a device segment: a whole NEFF of its own
 *   sgNN.onnx            a host segment: an ONNX model the runtime evaluates on the CPU
 * The header hash is the sha256 of the payload (pkg_version 1 = "tgz + sha256"); the uuid is
 * derived from that hash, so writing the same program twice gives the same bytes.
 *
 * read_neff checks, in order, with user errors: size (NHC_ENEFF004), header magic fields
 * (NHC_ENEFF001), NEFF version (NHC_ENEFF002), data_size against the file (NHC_ENEFF004), hash
 * (NHC_ENEFF003), archive (NHC_ENEFF005), JSON (NHC_ENEFF006), streams (NHC_ENEFF007/002), weights
 * (NHC_ENEFF011) and operand bounds in HBM (NHC_ENEFF008).
 */

#include "neff/Archive.h"
#include "neff/Isa.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nhc::neff {

constexpr uint64_t kHeaderSize = 1024;
constexpr uint64_t kPkgVersion = 1; ///< KLR: 1 = tgz + sha256 (neuron-compiler.md §4.1)
constexpr uint64_t kNeffVersionMajor = 1;
constexpr uint64_t kNeffVersionMinor = 0;

/** The decoded header. Offsets in the file follow the table of neuron-compiler.md §4.1. */
struct NeffHeader {
    uint64_t pkg_version = kPkgVersion;
    uint64_t header_size = kHeaderSize;
    uint64_t data_size = 0;
    uint64_t neff_version_major = kNeffVersionMajor;
    uint64_t neff_version_minor = kNeffVersionMinor;
    std::string build_version; ///< u8[128] at 40
    uint32_t num_tpb = 1;
    std::array<uint8_t, 32> hash{};
    std::array<uint8_t, 16> uuid{};
    std::string name; ///< char[256] at 220
    uint32_t requested_tpb_count = 1;
    std::array<uint8_t, 64> tpb_per_node{};
    uint64_t feature_bits = 0;
    uint32_t lnc_size = 1;
};

std::array<uint8_t, kHeaderSize> encode_header(const NeffHeader &h);
NeffHeader decode_header(const uint8_t *bytes);

struct WriteOptions {
    bool compress = true;     ///< false = --enable-fast-loading-neuron-binaries (plain tar)
    ArchiveProgress progress; ///< told the bytes written as the payload is made (may be empty)
    int jobs = 1;             ///< threads that compress the payload (--num-parallel-jobs)
};

std::vector<uint8_t> write_neff(const Program &p, const WriteOptions &opt = {});
/** write_neff into a file as the payload is made, never held whole (the header is written
 *  last, once the payload's size and hash are known); NHC_ENEFF010 if it cannot be written. */
void write_neff_file(const std::string &path, const Program &p, const WriteOptions &opt = {});

/** The member that makes a NEFF a partitioned one (see the file comment). */
constexpr const char *kPartitionMember = "partition.json";

/** Writes a partitioned NEFF of `members` (info.json and partition.json among them) named
 *  `name`; NHC_ENEFF010 if it cannot be written. */
void write_partitioned_neff_file(const std::string &path, const std::string &name,
                                 const ArchiveMembers &members, const WriteOptions &opt = {});

struct NeffContents {
    NeffHeader header;
    Program program;
    bool compressed = true;
    std::string info_json; ///< verbatim, for neff-dump
    /** A partitioned NEFF's partition.json and other members (the program then holds only what
     *  info.json says: name, target, options); empty for a NEFF of one program. */
    std::string partition_json;
    std::map<std::string, std::vector<uint8_t>> segment_files;
};

struct ReadOptions {
    /** False: the weights' files are checked for their sizes and read past, not kept
     *  (Program::weights_loaded is false): a timing-only run needs no values, and a model's
     *  weights are most of its NEFF. */
    bool weights = true;
};

NeffContents read_neff(const std::vector<uint8_t> &bytes, const ReadOptions &opt = {});
/** read_neff of a file, read in chunks: the payload is hashed and unpacked as it is read, never
 *  held whole (with ReadOptions::weights false, a model needs little more memory than its
 *  instructions). NHC_ENEFF010 if it cannot be read; the hash is checked at the end, and a
 *  payload that does not match its hash is NHC_ENEFF003 even where unpacking failed first. */
NeffContents read_neff_file(const std::string &path, const ReadOptions &opt = {});

/** The first checks of read_neff_file without unpacking: size, header, and the payload's hash
 *  (the compile cache's check of an entry, driver/CompileCache.h); the header when intact. */
NeffHeader check_neff_file_hash(const std::string &path);

/** Load-time checks of a program: every instruction on an engine that can run it
 *  (NHC_ENEFF012), every HBM operand inside its variable (NHC_ENEFF008), weights with their
 *  bytes (NHC_ENEFF011) when they were loaded. */
void validate_program(const Program &p);

/** Whole-file helpers; NHC_ENEFF010 if the file cannot be read or written. */
std::vector<uint8_t> read_file_bytes(const std::string &path);
void write_file_bytes(const std::string &path, const std::vector<uint8_t> &bytes);

std::string hex(const uint8_t *b, size_t n);

} // namespace nhc::neff

#endif
