// The message filter's window scan: which positions of a text may start one of a keyword
// automaton's first windows (its keywords' first 3 or 4 bytes), found 16 bytes at a time with a
// byte shuffle (SSSE3's pshufb on x86-64, NEON's tbl on arm64), as Hyperscan's Teddy does, then
// checked against a bit set of the windows. MessageFilterCore builds the filter and walks its
// automaton only from the positions this returns. Compiler intrinsics only: no C library call.
#ifndef BLOCKLIST_CWINDOWSCAN_H
#define BLOCKLIST_CWINDOWSCAN_H

#include <stddef.h>
#include <stdint.h>

/// A filter of windows: 8 buckets of windows; for each of the window's bytes, the buckets a low
/// and a high nibble allow; a set of the windows' hashes (`blocklist_window_hash`, 2^15 bits);
/// and, by hash / 8, how far from its start the longest keyword that starts with a window
/// reaches. The hashes are of bytes with their 0x20 bit set (ASCII capitals as small letters),
/// in the text and in the windows alike.
typedef struct {
    uint8_t low[4][16];
    uint8_t high[4][16];
    uint64_t hashes[512];
    uint8_t reach[4096];
    /// 3 or 4: the window's length.
    uint32_t width;
    /// The scan to run: what `blocklist_window_scan_available` answered.
    uint32_t shuffle;
} blocklist_window_filter;

/// The byte shuffle this processor has for the scan: 2 for AVX2 (32 bytes a turn), 1 for SSSE3
/// on x86-64 or NEON on arm64 (16 bytes), 0 for none: the filter is then not built, and the
/// automaton walks every byte.
int blocklist_window_scan_available(void);

/// The hash a window's bytes (each with its 0x20 bit set, little-endian, the 4th byte 0 when the
/// width is 3) take in `hashes`.
static inline uint32_t blocklist_window_hash(uint32_t window) { return (window * 2654435761u) >> 17; }

/// Writes to `starts` each position p < `limit` with p + width <= `length` where the text's
/// window passes the filter, in ascending order, with the window's reach in the high 16 bits
/// (p | reach << 16), and returns how many. `starts` holds `limit` entries; `limit` is at most
/// 1,024. Call only with a filter whose `shuffle` `blocklist_window_scan_available` gave.
size_t blocklist_window_scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts);

#endif
