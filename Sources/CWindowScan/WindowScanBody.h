// The scan's body, included by WindowScan.c once per instruction set after it defines: `vector`,
// BLOCK (the bytes of a vector), BITS_PER_BYTE (of `nonzeroBytes`), TARGET (the function
// attribute that enables the instructions), SCAN (the inlined function's name), SCAN3 and SCAN4
// (the names of its instances for windows of 3 and 4 bytes), and LOAD, LOAD_TABLE
// (16 bytes in every 16-byte lane), SPLAT, AND, HIGH_NIBBLES, LOOKUP (a shuffle within each 16-byte
// lane), JOIN (the vector that ends with the first n bytes of `current` after `previous`) and
// NONZERO_BYTES (a bit per byte that is not zero, byte i at bit i × BITS_PER_BYTE).

/// The buckets each byte allows as byte `j` of a window.
#define ALLOWED(j) AND(LOOKUP(low##j, lowNibbles), LOOKUP(high##j, highNibbles))

/// The scan for windows of `width` bytes (3 or 4, a constant once inlined): the shuffles mark
/// where a window may end, a vector at a time, into `ends`; then each marked window's hash is
/// looked up.
TARGET __attribute__((always_inline)) static inline size_t SCAN(const blocklist_window_filter *filter,
    const uint8_t *text, size_t length, size_t limit, uint32_t *starts, const size_t width) {
    enum {
        blocksPerWord = 64 / (BLOCK * BITS_PER_BYTE),
        maximumBlocks = 1024 / BLOCK + 1,
    };
    const vector low0 = LOAD_TABLE(filter->low[0]), low1 = LOAD_TABLE(filter->low[1]),
                 low2 = LOAD_TABLE(filter->low[2]), low3 = LOAD_TABLE(filter->low[3]);
    const vector high0 = LOAD_TABLE(filter->high[0]), high1 = LOAD_TABLE(filter->high[1]),
                 high2 = LOAD_TABLE(filter->high[2]), high3 = LOAD_TABLE(filter->high[3]);
    const vector nibble = SPLAT(0x0F);
    // A window ending at byte e starts at e - width + 1; the previous block's allowed buckets
    // carry a window's first bytes over a block's start.
    vector previous0 = SPLAT(0), previous1 = SPLAT(0), previous2 = SPLAT(0);
    const size_t lastEnd = limit + width - 1;  // windows end before this
    const size_t blocks = (lastEnd + BLOCK - 1) / BLOCK;
    uint64_t ends[(maximumBlocks + blocksPerWord - 1) / blocksPerWord];
    uint8_t tail[BLOCK];
    for (size_t block = 0; block < blocks; block++) {
        vector bytes;
        const size_t at = block * BLOCK;
        if (at + BLOCK <= length) {
            bytes = LOAD(text + at);
        } else {
            for (size_t i = 0; i < BLOCK; i++) tail[i] = at + i < length ? text[at + i] : 0;
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
        const uint64_t bits = NONZERO_BYTES(found) << (block % blocksPerWord * BLOCK * BITS_PER_BYTE);
        if (block % blocksPerWord == 0) ends[block / blocksPerWord] = bits;
        else ends[block / blocksPerWord] |= bits;
    }
    // Ends before the first window's end, or at or after the last one's, are dropped.
    ends[0] &= ~((1ull << ((width - 1) * BITS_PER_BYTE)) - 1);
    const size_t lastBits = (lastEnd - (blocks - 1) * BLOCK + (blocks - 1) % blocksPerWord * BLOCK) * BITS_PER_BYTE;
    if (lastBits < 64) ends[(blocks - 1) / blocksPerWord] &= (1ull << lastBits) - 1;
    const uint32_t keep = width == 4 ? 0xFFFFFFFFu : 0x00FFFFFFu;
    size_t found = 0;
    // Each position marked: its window's hash, looked up. (Checking a word's first two marks
    // without a branch, whether they are there or not, measured no faster.)
    for (size_t word = 0; word <= (blocks - 1) / blocksPerWord; word++) {
        uint64_t bits = ends[word];
        while (bits != 0) {
            const size_t start =
                word * blocksPerWord * BLOCK + (size_t)__builtin_ctzll(bits) / BITS_PER_BYTE - (width - 1);
            bits &= bits - 1;
            const uint32_t window = start + 4 <= length
                ? loadLittleEndian32(text + start)
                : (uint32_t)text[start] | (uint32_t)text[start + 1] << 8 | (uint32_t)text[start + 2] << 16;
            const uint32_t hash = blocklist_window_hash((window | 0x20202020u) & keep);
            starts[found] = (uint32_t)start | (uint32_t)filter->reach[hash >> 3] << 16;
            found += (filter->hashes[hash >> 6] >> (hash & 63)) & 1;
        }
    }
    return found;
}

TARGET static size_t SCAN3(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    return SCAN(filter, text, length, limit, starts, 3);
}

TARGET static size_t SCAN4(const blocklist_window_filter *filter, const uint8_t *text, size_t length, size_t limit,
    uint32_t *starts) {
    return SCAN(filter, text, length, limit, starts, 4);
}

#undef ALLOWED
