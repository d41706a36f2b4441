#include "CWindowScan.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <tmmintrin.h>
#define BLOCKLIST_WINDOW_SCAN_TARGET __attribute__((target("ssse3")))
typedef __m128i vector;
#define LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define SPLAT(b) _mm_set1_epi8((char)(b))
#define AND(a, b) _mm_and_si128(a, b)
#define HIGH_NIBBLES(v) _mm_and_si128(_mm_srli_epi16(v, 4), SPLAT(0x0F))
#define LOOKUP(table, indices) _mm_shuffle_epi8(table, indices)
// The last `16 - n` bytes of `previous`, then the first `n` of `current`.
#define JOIN(current, previous, n) _mm_alignr_epi8(current, previous, 16 - (n))
/// A bit per byte that is not zero: byte i is bit i.
static inline uint64_t nonzeroBytes(vector v) {
    return (uint64_t)(~_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) & 0xFFFF);
}
enum { bitsPerByte = 1 };
int blocklist_window_scan_available(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) != 0;
}
#elif defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#define BLOCKLIST_WINDOW_SCAN_TARGET
typedef uint8x16_t vector;
#define LOAD(p) vld1q_u8((const uint8_t *)(p))
#define SPLAT(b) vdupq_n_u8((uint8_t)(b))
#define AND(a, b) vandq_u8(a, b)
#define HIGH_NIBBLES(v) vshrq_n_u8(v, 4)
#define LOOKUP(table, indices) vqtbl1q_u8(table, indices)
#define JOIN(current, previous, n) vextq_u8(previous, current, 16 - (n))
/// A bit per byte that is not zero: byte i is bit 4i (a nibble per byte by a narrowing shift,
/// then its lowest bit).
static inline uint64_t nonzeroBytes(vector v) {
    uint8x8_t nibbles = vshrn_n_u16(vreinterpretq_u16_u8(vtstq_u8(v, v)), 4);
    return vget_lane_u64(vreinterpret_u64_u8(nibbles), 0) & 0x1111111111111111ull;
}
enum { bitsPerByte = 4 };
int blocklist_window_scan_available(void) { return 1; }
#else
#define BLOCKLIST_WINDOW_SCAN_NONE
int blocklist_window_scan_available(void) { return 0; }
#endif

#ifndef BLOCKLIST_WINDOW_SCAN_NONE

static inline uint32_t loadLittleEndian32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

enum {
    /// A block's bits, packed into 64-bit words: 4 blocks a word on x86-64, 1 on arm64.
    blocksPerWord = 64 / (16 * bitsPerByte),
    /// The most blocks one scan covers: `limit` is at most this many windows.
    maximumBlocks = 1024 / 16 + 1,
};

/// The bits of a block's first `count` bytes (count < 16).
static inline uint64_t bytesBelow(size_t count) { return (1ull << (count * bitsPerByte)) - 1; }

/// The buckets each byte of `v` allows as byte `j` of a window.
#define ALLOWED(j) AND(LOOKUP(low##j, lowNibbles), LOOKUP(high##j, highNibbles))

/// The scan for windows of `width` bytes (3 or 4, a constant once inlined): the shuffles mark
/// where a window may end, 16 bytes at a time, into `ends`; then each marked window's hash is
/// looked up.
BLOCKLIST_WINDOW_SCAN_TARGET __attribute__((always_inline))
static inline size_t scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts, const size_t width) {
    const vector low0 = LOAD(filter->low[0]), low1 = LOAD(filter->low[1]), low2 = LOAD(filter->low[2]),
                 low3 = LOAD(filter->low[3]);
    const vector high0 = LOAD(filter->high[0]), high1 = LOAD(filter->high[1]), high2 = LOAD(filter->high[2]),
                 high3 = LOAD(filter->high[3]);
    const vector nibble = SPLAT(0x0F);
    // A window ending at byte e starts at e - width + 1; the previous block's allowed buckets
    // carry a window's first bytes over a block's start.
    vector previous0 = SPLAT(0), previous1 = SPLAT(0), previous2 = SPLAT(0);
    const size_t lastEnd = limit + width - 1;  // windows end before this
    const size_t blocks = (lastEnd + 15) / 16;
    uint64_t ends[(maximumBlocks + blocksPerWord - 1) / blocksPerWord];
    uint8_t tail[16];
    for (size_t block = 0; block < blocks; block++) {
        vector bytes;
        const size_t at = block * 16;
        if (at + 16 <= length) {
            bytes = LOAD(text + at);
        } else {
            for (size_t i = 0; i < 16; i++) tail[i] = at + i < length ? text[at + i] : 0;
            bytes = LOAD(tail);
        }
        const vector lowNibbles = AND(bytes, nibble), highNibbles = HIGH_NIBBLES(bytes);
        const vector allowed0 = ALLOWED(0), allowed1 = ALLOWED(1), allowed2 = ALLOWED(2);
        vector found;
        if (width == 4) {
            found = AND(AND(ALLOWED(3), JOIN(allowed2, previous2, 1)),
                AND(JOIN(allowed1, previous1, 2), JOIN(allowed0, previous0, 3)));
        } else {
            found = AND(allowed2, AND(JOIN(allowed1, previous1, 1), JOIN(allowed0, previous0, 2)));
        }
        previous0 = allowed0;
        previous1 = allowed1;
        previous2 = allowed2;
        const uint64_t bits = nonzeroBytes(found) << (block % blocksPerWord * 16 * bitsPerByte);
        if (block % blocksPerWord == 0) ends[block / blocksPerWord] = bits;
        else ends[block / blocksPerWord] |= bits;
    }
    // Ends before the first window's end, or at or after the last one's, are dropped.
    ends[0] &= ~bytesBelow(width - 1);
    const size_t lastBits = (lastEnd - (blocks - 1) * 16) * bitsPerByte + (blocks - 1) % blocksPerWord * 16 * bitsPerByte;
    if (lastBits < 64) ends[(blocks - 1) / blocksPerWord] &= (1ull << lastBits) - 1;
    const uint32_t keep = width == 4 ? 0xFFFFFFFFu : 0x00FFFFFFu;
    size_t found = 0;
    for (size_t word = 0; word <= (blocks - 1) / blocksPerWord; word++) {
        uint64_t bits = ends[word];
        while (bits != 0) {
            const size_t start = word * blocksPerWord * 16 + (size_t)__builtin_ctzll(bits) / bitsPerByte - (width - 1);
            bits &= bits - 1;
            uint32_t window;
            if (start + 4 <= length) {
                window = loadLittleEndian32(text + start);
            } else {
                window = (uint32_t)text[start] | (uint32_t)text[start + 1] << 8 | (uint32_t)text[start + 2] << 16;
            }
            const uint32_t hash = blocklist_window_hash((window | 0x20202020u) & keep);
            starts[found] = (uint32_t)start;
            found += (filter->hashes[hash >> 6] >> (hash & 63)) & 1;
        }
    }
    return found;
}

BLOCKLIST_WINDOW_SCAN_TARGET
size_t blocklist_window_scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    const size_t width = filter->width == 3 ? 3 : 4;
    if (length < width) return 0;
    if (limit > length - width + 1) limit = length - width + 1;
    if (limit > 1024) limit = 1024;
    if (limit == 0) return 0;
    return width == 4 ? scan(filter, text, length, limit, starts, 4) : scan(filter, text, length, limit, starts, 3);
}

#else

size_t blocklist_window_scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    (void)filter, (void)text, (void)length, (void)limit, (void)starts;
    return 0;
}

#endif
