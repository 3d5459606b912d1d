// Precompiled header for the Halide-heavy libraries: Halide.h costs 3-5 s and ~300 MB per
// translation unit (../shared/reference/halide14.md §6), so it is parsed once per target.
#include <Halide.h>
