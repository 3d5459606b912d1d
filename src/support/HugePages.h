#ifndef NHC_SUPPORT_HUGEPAGES_H
#define NHC_SUPPORT_HUGEPAGES_H

/** \file
 * Transparent huge pages for the tools' heap. A model's weights cross the compiler as a few whole
 * copies (the file, protobuf's strings, the graph's tensors, the NEFF's variables), each first
 * touched page by page; on 4 KiB pages that is a page fault per 4 KiB, and on the virtual machines
 * we measure on a fault costs enough that faulting BERT-base's 438 MB in took ~2 s of each copy
 * (bench/README.md, "Compile time"). Debian's glibc (2.35 and later) backs malloc with huge pages
 * when its `glibc.malloc.hugetlb=1` tunable is set, which only the environment at start-up can do:
 * so a tool re-executes itself once with the tunable added. Nothing else changes: same program,
 * same arguments, same output.
 */

namespace nhc {

/** Re-executes this process (/proc/self/exe, the same argv) with `glibc.malloc.hugetlb=1` added
 *  to GLIBC_TUNABLES, unless it is there already or NHC_NO_HUGE_PAGES is set; returns (and the
 *  tool goes on with 4 KiB pages) if the re-execution cannot be done. Call first thing in main. */
void reexec_with_huge_pages(char **argv);

} // namespace nhc

#endif
