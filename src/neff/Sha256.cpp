#include "neff/Sha256.h"

#include "support/Error.h"

#include <openssl/evp.h>

namespace nhc::neff {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    nhc_assert(ctx_ && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1,
               "OpenSSL's SHA-256 cannot be initialised");
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(ctx_);
}

void Sha256::update(const uint8_t *data, size_t size) {
    if (size > 0)
        nhc_assert(EVP_DigestUpdate(ctx_, data, size) == 1, "SHA-256 update failed");
}

std::array<uint8_t, 32> Sha256::final() {
    std::array<uint8_t, 32> out{};
    unsigned int n = 0;
    nhc_assert(EVP_DigestFinal_ex(ctx_, out.data(), &n) == 1 && n == out.size(),
               "SHA-256 final failed");
    return out;
}

std::array<uint8_t, 32> sha256(const uint8_t *data, size_t size) {
    Sha256 h;
    h.update(data, size);
    return h.final();
}

} // namespace nhc::neff
