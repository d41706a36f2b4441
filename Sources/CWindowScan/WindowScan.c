#include "CWindowScan.h"

__attribute__((unused)) static inline uint32_t loadLittleEndian32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

// SSSE3: 16 bytes a turn.
#define vector __m128i
#define BLOCK 16
#define BITS_PER_BYTE 1
#define TARGET __attribute__((target("ssse3")))
#define SCAN scanSSSE3
#define SCAN3 scan3SSSE3
#define SCAN4 scan4SSSE3
#define LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define LOAD_TABLE(p) LOAD(p)
#define SPLAT(b) _mm_set1_epi8((char)(b))
#define AND(a, b) _mm_and_si128(a, b)
#define HIGH_NIBBLES(v) _mm_and_si128(_mm_srli_epi16(v, 4), SPLAT(0x0F))
#define LOOKUP(table, indices) _mm_shuffle_epi8(table, indices)
#define JOIN(current, previous, n) _mm_alignr_epi8(current, previous, 16 - (n))
#define NONZERO_BYTES(v) ((uint64_t)(~_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())) & 0xFFFF))
#include "WindowScanBody.h"
#undef vector
#undef BLOCK
#undef TARGET
#undef SCAN
#undef SCAN3
#undef SCAN4
#undef LOAD
#undef LOAD_TABLE
#undef SPLAT
#undef AND
#undef HIGH_NIBBLES
#undef LOOKUP
#undef JOIN
#undef NONZERO_BYTES

// AVX2: 32 bytes a turn; the shuffle and the byte shift work within each 16-byte lane, so the
// tables are in both lanes and JOIN takes the lane before from a permute.
#define vector __m256i
#define BLOCK 32
#define TARGET __attribute__((target("avx2")))
#define SCAN scanAVX2
#define SCAN3 scan3AVX2
#define SCAN4 scan4AVX2
#define LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define LOAD_TABLE(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define SPLAT(b) _mm256_set1_epi8((char)(b))
#define AND(a, b) _mm256_and_si256(a, b)
#define HIGH_NIBBLES(v) _mm256_and_si256(_mm256_srli_epi16(v, 4), SPLAT(0x0F))
#define LOOKUP(table, indices) _mm256_shuffle_epi8(table, indices)
#define JOIN(current, previous, n) \
    _mm256_alignr_epi8(current, _mm256_permute2x128_si256(previous, current, 0x21), 16 - (n))
#define NONZERO_BYTES(v) ((uint64_t)(uint32_t)~_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_setzero_si256())))
#include "WindowScanBody.h"

int blocklist_window_scan_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || (c & bit_SSSE3) == 0) return 0;
    // AVX2 needs the processor's flag and the system's saving of the YMM registers (XCR0).
    const int osSavesYMM = (c & bit_OSXSAVE) != 0 && ({
        unsigned low, high;
        __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
        (low & 6) == 6;
    });
    if (osSavesYMM && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2) != 0) return 2;
    return 1;
}

/// The scan for the filter's shuffle and width, once `blocklist_window_scan` has bounded `limit`.
static size_t scanBounded(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts, size_t width) {
    if (filter->shuffle == 2) {
        return width == 4 ? scan4AVX2(filter, text, length, limit, starts)
                          : scan3AVX2(filter, text, length, limit, starts);
    }
    return width == 4 ? scan4SSSE3(filter, text, length, limit, starts) : scan3SSSE3(filter, text, length, limit, starts);
}

#elif defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>

// NEON: 16 bytes a turn; a narrowing shift gives a nibble per byte, of which one bit is kept.
#define vector uint8x16_t
#define BLOCK 16
#define BITS_PER_BYTE 4
#define TARGET
#define SCAN scanNEON
#define SCAN3 scan3NEON
#define SCAN4 scan4NEON
#define LOAD(p) vld1q_u8((const uint8_t *)(p))
#define LOAD_TABLE(p) LOAD(p)
#define SPLAT(b) vdupq_n_u8((uint8_t)(b))
#define AND(a, b) vandq_u8(a, b)
#define HIGH_NIBBLES(v) vshrq_n_u8(v, 4)
#define LOOKUP(table, indices) vqtbl1q_u8(table, indices)
#define JOIN(current, previous, n) vextq_u8(previous, current, 16 - (n))
#define NONZERO_BYTES(v) \
    (vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(vtstq_u8(v, v)), 4)), 0) \
        & 0x1111111111111111ull)
#include "WindowScanBody.h"

int blocklist_window_scan_available(void) { return 1; }

static size_t scanBounded(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts, size_t width) {
    return width == 4 ? scan4NEON(filter, text, length, limit, starts) : scan3NEON(filter, text, length, limit, starts);
}

#else

int blocklist_window_scan_available(void) { return 0; }

size_t blocklist_window_scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    (void)filter, (void)text, (void)length, (void)limit, (void)starts;
    return 0;
}

#define BLOCKLIST_WINDOW_SCAN_NONE
#endif

#ifndef BLOCKLIST_WINDOW_SCAN_NONE
size_t blocklist_window_scan(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    const size_t width = filter->width == 3 ? 3 : 4;
    if (length < width) return 0;
    if (limit > length - width + 1) limit = length - width + 1;
    if (limit > 1024) limit = 1024;
    if (limit == 0) return 0;
    return scanBounded(filter, text, length, limit, starts, width);
}
#endif
