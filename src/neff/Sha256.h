#ifndef NHC_NEFF_SHA256_H
#define NHC_NEFF_SHA256_H

/** \file
 * SHA-256 of a NEFF's payload (the header's hash), fed in pieces. OpenSSL's libcrypto (Debian's
 * libssl-dev): it uses the CPU's SHA extensions where there are some, which hash BERT-base's
 * 438 MB payload in a fraction of the second LLVM's portable SHA256 took (bench/README.md,
 * "Compile time"), on every compile and every load.
 */

#include <array>
#include <cstddef>
#include <cstdint>

struct evp_md_ctx_st;

namespace nhc::neff {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;
    void update(const uint8_t *data, size_t size);
    /** The digest of everything given so far; the hasher takes nothing after it. */
    std::array<uint8_t, 32> final();

private:
    evp_md_ctx_st *ctx_;
};

/** The digest of one buffer. */
std::array<uint8_t, 32> sha256(const uint8_t *data, size_t size);

} // namespace nhc::neff

#endif
