#ifndef NHC_SUPPORT_ERROR_H
#define NHC_SUPPORT_ERROR_H

/** \file
 * The two error channels of neuron-halide-cc (DESIGN.md "Errors"):
 *  - a user error (bad model, bad flag, unmappable schedule, bad NEFF) is a UserError carrying a
 * code `NHC_E<AREA><NNN>` and a lower-case message that names the node / tensor / option and says
 * what was expected and what was found. Every code is listed in docs/errors.md and triggered by a
 * test.
 *  - an internal error is an assertion (nhc_assert / internal_error): it says it is a compiler bug.
 * Both are exceptions so that a tool's main can report them and exit non-zero instead of crashing.
 */

#include <sstream>
#include <stdexcept>
#include <string>

namespace nhc {

/** A user-actionable error with a stable code. */
class UserError : public std::runtime_error {
public:
    UserError(std::string code, const std::string &message)
        : std::runtime_error(message), code_(std::move(code)) {}
    const std::string &code() const { return code_; }
    /** "[NHC_EXXX000] message", the form printed by the tools. */
    std::string formatted() const { return "[" + code_ + "] " + what(); }

private:
    std::string code_;
};

/** A compiler bug: an invariant the code relies on does not hold. */
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string &message) : std::logic_error(message) {}
};

/** Throws a UserError; the message is built from the streamed arguments. */
template <typename... Args>
[[noreturn]] void user_error(const std::string &code, const Args &...args) {
    std::ostringstream os;
    (os << ... << args);
    throw UserError(code, os.str());
}

[[noreturn]] void internal_error_at(const char *file, int line, const std::string &message);

} // namespace nhc

#define NHC_STRINGIFY2(x) #x
#define NHC_STRINGIFY(x) NHC_STRINGIFY2(x)

/** Internal assertion: always on (also in release builds), throws nhc::InternalError. */
#define nhc_assert(cond, msg)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::ostringstream nhc_assert_os_;                                                     \
            nhc_assert_os_ << "assertion '" #cond "' failed: " << msg;                             \
            ::nhc::internal_error_at(__FILE__, __LINE__, nhc_assert_os_.str());                    \
        }                                                                                          \
    } while (0)

#endif
