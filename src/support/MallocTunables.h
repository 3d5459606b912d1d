#ifndef NHC_SUPPORT_MALLOCTUNABLES_H
#define NHC_SUPPORT_MALLOCTUNABLES_H

/** \file
 * glibc malloc settings for the tools' heap. A model's weights cross the compiler as a few whole
 * copies (protobuf's strings, the graph's tensors, their 16-bit conversions, the NEFF's tiled
 * variables, the gzip blocks), each first touched page by page, and the kernel zeroes every page
 * a process touches for the first time: on the virtual machines we measure on that was the
 * largest single cost of compiling a large model (bench/README.md, "Compile time" sections). Two
 * settings, which only the environment at start-up can make (GLIBC_TUNABLES), so a tool re-executes
 * itself once with them added:
 * - `glibc.malloc.hugetlb=1`: transparent huge pages for malloc, a fault per 2 MiB, not per 4 KiB.
 * - `glibc.malloc.mmap_threshold` at its largest (32 MiB) and `glibc.malloc.trim_threshold` out
 *   of reach: a freed weight's memory stays in the heap for the next copy instead of going back
 *   to the kernel, which would zero it again when the next copy touches it. On BERT-base with 24
 *   layers (bf16, -O2, 4 KiB pages) the pages first touched fall from 2.5 to 1.7 GB, about the
 *   peak resident size (1.58 GB): freed memory is reused instead of zeroed again.
 * Nothing else changes: same program, same arguments, same output.
 */

namespace nhc {

/** Re-executes this process (/proc/self/exe, the same argv) with the settings above added to
 *  GLIBC_TUNABLES, unless `glibc.malloc.hugetlb` is there already (the user's own settings, or
 *  the re-execution) or NHC_DEFAULT_MALLOC is set; returns (and the tool goes on with glibc's
 *  defaults) if the re-execution cannot be done. Call first thing in main. */
void reexec_with_malloc_tunables(char **argv);

} // namespace nhc

#endif
